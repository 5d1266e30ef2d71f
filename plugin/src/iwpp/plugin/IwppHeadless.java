/*
 * IwppHeadless.java - lets run("... (IWPP)", ...) work in plain ImageJ 1.x
 * started with -Djava.awt.headless=true (or with no display).
 *
 * Why it is needed: ImageJ 1.x builds its command table while it builds the AWT
 * menu bar (Menus.addMenuBar). With a headless AWT every java.awt.Menu
 * constructor throws HeadlessException, so the first run(...) of ANY command,
 * built-in or plugin, fails in IJ.init() and no plugins.config is ever read.
 * (Fiji --headless patches ImageJ to avoid this; there this class does nothing.)
 *
 * install() builds the same table without AWT: the commands listed in ij.jar's
 * IJ_Props.txt plus the commands of the plugins.config of every jar (with "_"
 * in its name) in the plugins folder, and hands it to ImageJ. Call it first in
 * a headless macro:
 *     call("iwpp.plugin.IwppHeadless.install");
 * It returns the number of commands installed ("0" when nothing was needed).
 */
package iwpp.plugin;

import ij.IJ;
import ij.Menus;

import java.awt.GraphicsEnvironment;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

public final class IwppHeadless {
    private IwppHeadless() {
    }

    public static synchronized String install() {
        if (Menus.getCommands() != null || !GraphicsEnvironment.isHeadless())
            return "0"; // ImageJ builds (or has built) its own table
        Hashtable<String, String> table = new Hashtable<String, String>();
        try {
            InputStream props = IJ.class.getResourceAsStream("/IJ_Props.txt");
            if (props != null)
                readIjProps(props, table);
        } catch (IOException e) {
            IJ.log("IWPP: could not read IJ_Props.txt: " + e.getMessage());
        }
        String dir = pluginsDir();
        if (dir != null)
            addJars(new File(dir), table, 0);
        try {
            set("pluginsTable", table);
            if (dir != null && Menus.getPlugInsPath() == null)
                set("pluginsPath", dir.endsWith(File.separator) ? dir : dir + File.separator);
        } catch (ReflectiveOperationException | RuntimeException e) {
            IJ.log("IWPP: could not install the headless command table (" + e + ").");
            return "0";
        }
        return String.valueOf(table.size());
    }

    private static void set(String field, Object value) throws ReflectiveOperationException {
        Field f = Menus.class.getDeclaredField(field);
        f.setAccessible(true);
        f.set(null, value);
    }

    /** The plugins folder as IJ.getClassLoader() finds it: plugins.dir/plugins, else plugins.dir. */
    static String pluginsDir() {
        String p = Menus.getPlugInsPath();
        if (p != null)
            return p;
        String home = System.getProperty("plugins.dir");
        if (home == null)
            home = System.getProperty("user.dir");
        if (home == null)
            return null;
        File sub = new File(home, "plugins");
        return sub.isDirectory() ? sub.getPath() : home;
    }

    /** Lines such as  filters02="Gaussian Blur...",ij.plugin.filter.GaussianBlur  (a [key] suffix is a shortcut). */
    private static void readIjProps(InputStream in, Hashtable<String, String> table) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.ISO_8859_1));
        try {
            for (String line; (line = r.readLine()) != null;) {
                int eq = line.indexOf("=\"");
                if (eq <= 0 || line.startsWith("#"))
                    continue;
                int q = line.indexOf('"', eq + 2);
                int comma = q < 0 ? -1 : line.indexOf(',', q);
                if (comma < 0)
                    continue;
                String label = line.substring(eq + 2, q);
                int sc = label.indexOf('[');
                if (sc > 0 && label.endsWith("]"))
                    label = label.substring(0, sc);
                String cls = line.substring(comma + 1).trim();
                if (!label.isEmpty() && !cls.isEmpty() && !table.containsKey(label))
                    table.put(label, cls);
            }
        } finally {
            r.close();
        }
    }

    /** Jars with "_" in their name, in the folder and one level of subfolders, as ImageJ scans them. */
    private static void addJars(File dir, Hashtable<String, String> table, int level) {
        File[] files = dir.listFiles();
        if (files == null)
            return;
        for (File f : files) {
            if (f.isDirectory() && level == 0)
                addJars(f, table, 1);
            else if (f.getName().endsWith(".jar") && f.getName().contains("_"))
                addPluginsConfig(f, table);
        }
    }

    /** Lines such as  Plugins>IWPP, "Fill Holes (IWPP)", iwpp.plugin.FilterCommand("fill-holes"). */
    private static void addPluginsConfig(File jar, Hashtable<String, String> table) {
        try {
            ZipFile z = new ZipFile(jar);
            try {
                ZipEntry e = z.getEntry("plugins.config");
                if (e == null)
                    return;
                BufferedReader r = new BufferedReader(new InputStreamReader(z.getInputStream(e), StandardCharsets.UTF_8));
                for (String line; (line = r.readLine()) != null;) {
                    line = line.trim();
                    if (line.isEmpty() || line.startsWith("#"))
                        continue;
                    int q1 = line.indexOf('"');
                    int q2 = q1 < 0 ? -1 : line.indexOf('"', q1 + 1);
                    int comma = q2 < 0 ? -1 : line.indexOf(',', q2);
                    if (comma < 0)
                        continue;
                    table.put(line.substring(q1 + 1, q2), line.substring(comma + 1).trim());
                }
            } finally {
                z.close();
            }
        } catch (IOException ex) {
            IJ.log("IWPP: could not read " + jar + ": " + ex.getMessage());
        }
    }
}
