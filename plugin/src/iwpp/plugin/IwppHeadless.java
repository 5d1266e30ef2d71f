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
 * install() builds the same table without AWT and hands it to ImageJ: the
 * commands ImageJ's menu code adds one by one (Duplicate..., 8-bit, Find
 * Maxima..., Properties..., Measure, ...: read from the string constants of
 * the ij.Menus class this ImageJ runs, so they match its version), the
 * submenus listed in ij.jar's IJ_Props.txt, and the commands of the
 * plugins.config of every jar (with "_" in its name) in the plugins folder.
 * Call it first in a headless macro:
 *     call("iwpp.plugin.IwppHeadless.install");
 * It returns the number of commands installed ("0" when nothing was needed).
 */
package iwpp.plugin;

import ij.IJ;
import ij.Menus;

import java.awt.GraphicsEnvironment;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;
import java.util.Properties;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

public final class IwppHeadless {
    private IwppHeadless() {
    }

    public static synchronized String install() {
        if (Menus.getCommands() != null || !GraphicsEnvironment.isHeadless())
            return "0"; // ImageJ builds (or has built) its own table
        Hashtable<String, String> table = builtInCommands();
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

    /**
     * The (label, class) pairs of Menus.addPlugInItem(menu, label, class, key,
     * shift), addCheckboxItem(menu, label, class) and pluginsTable.put(label,
     * class) calls with constant strings: in the bytecode two
     * string constants loaded one after the other, then, a few bytes on, the
     * call. Reads the class file's constant pool, then scans the bytes for
     * that pattern.
     */
    static void readMenuItems(InputStream in, Hashtable<String, String> table) throws IOException {
        DataInputStream d = new DataInputStream(new BufferedInputStream(in));
        byte[] all;
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] b = new byte[65536];
            for (int n; (n = d.read(b)) > 0;)
                buf.write(b, 0, n);
            all = buf.toByteArray();
        } finally {
            d.close();
        }
        DataInputStream c = new DataInputStream(new ByteArrayInputStream(all));
        if (c.readInt() != 0xCAFEBABE)
            return;
        c.readUnsignedShort();
        c.readUnsignedShort();
        int count = c.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] stringRef = new int[count];   // CONSTANT_String -> utf8 index
        int[] nameAndType = new int[count]; // CONSTANT_Methodref -> NameAndType index
        int[] ntName = new int[count];      // CONSTANT_NameAndType -> name index
        for (int i = 1; i < count; i++) {
            int tag = c.readUnsignedByte();
            switch (tag) {
            case 1: utf8[i] = c.readUTF(); break;
            case 3: case 4: c.readInt(); break;
            case 5: case 6: c.readLong(); i++; break;
            case 7: case 16: case 19: case 20: c.readUnsignedShort(); break;
            case 8: stringRef[i] = c.readUnsignedShort(); break;
            case 9: case 11: case 17: case 18: c.readInt(); break;
            case 10: c.readUnsignedShort(); nameAndType[i] = c.readUnsignedShort(); break;
            case 12: ntName[i] = c.readUnsignedShort(); c.readUnsignedShort(); break;
            case 15: c.readUnsignedByte(); c.readUnsignedShort(); break;
            default: return; // a constant this reader does not know: give up rather than guess
            }
        }
        int start = all.length - c.available();
        String prev = null;
        int prevEnd = -1;
        for (int p = start; p < all.length - 2; p++) {
            int op = all[p] & 0xff;
            int idx;
            int len;
            if (op == 0x12) { // ldc
                idx = all[p + 1] & 0xff;
                len = 2;
            } else if (op == 0x13) { // ldc_w
                idx = ((all[p + 1] & 0xff) << 8) | (all[p + 2] & 0xff);
                len = 3;
            } else {
                continue;
            }
            String str = idx > 0 && idx < count && stringRef[idx] > 0 ? utf8[stringRef[idx]] : null;
            if (str == null)
                continue;
            if (prev != null && prevEnd == p && CLASS.matcher(str).matches()) {
                /* the call: within the next 6 bytes (an int and a boolean pushed for addPlugInItem) */
                for (int q = p + len; q < Math.min(all.length - 2, p + len + 7); q++) {
                    if ((all[q] & 0xff) != 0xb6)
                        continue;
                    int m = ((all[q + 1] & 0xff) << 8) | (all[q + 2] & 0xff);
                    String name = m > 0 && m < count && nameAndType[m] > 0 && ntName[nameAndType[m]] > 0
                            ? utf8[ntName[nameAndType[m]]] : null;
                    /* (Hashtable.put: entries the menu code puts in the table directly) */
                    if ("addPlugInItem".equals(name) || "addCheckboxItem".equals(name) || "put".equals(name)) {
                        if (!prev.isEmpty() && !table.containsKey(prev))
                            table.put(prev, str);
                        break;
                    }
                }
            }
            prev = str;
            prevEnd = p + len;
        }
    }

    private static final Pattern CLASS = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)+(\\(.*\\))?");

    /** ImageJ's own commands (label -> class), as its menus would list them; no plugins. */
    public static Hashtable<String, String> builtInCommands() {
        Hashtable<String, String> table = new Hashtable<String, String>();
        try {
            InputStream menus = IJ.class.getResourceAsStream("/ij/Menus.class");
            if (menus != null)
                readMenuItems(menus, table);
        } catch (IOException | RuntimeException e) {
            IJ.log("IWPP: could not read ImageJ's built-in commands: " + e);
        }
        try {
            InputStream props = IJ.class.getResourceAsStream("/IJ_Props.txt");
            if (props != null)
                readIjProps(props, table);
        } catch (IOException e) {
            IJ.log("IWPP: could not read IJ_Props.txt: " + e.getMessage());
        }
        return table;
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
        Properties props = new Properties(); // as ImageJ reads it (backslash escapes undone)
        try {
            props.load(in);
        } finally {
            in.close();
        }
        for (String key : props.stringPropertyNames()) {
            String line = props.getProperty(key);
            if (!line.startsWith("\""))
                continue;
            int q = line.indexOf('"', 1);
            int comma = q < 0 ? -1 : line.indexOf(',', q);
            if (comma < 0)
                continue;
            String label = line.substring(1, q);
            /* as ImageJ: a letter or digit shortcut leaves the label ("Properties... [y]" is
               "Properties... "), others stay in it ("In [+]", "Next Slice [>]") */
            int sc = label.lastIndexOf('[');
            if (sc > 0 && label.endsWith("]") && label.length() - sc == 3
                    && Character.isLetterOrDigit(label.charAt(sc + 1)))
                label = label.substring(0, sc);
            String cls = line.substring(comma + 1).trim();
            if (!label.isEmpty() && !cls.isEmpty() && !table.containsKey(label))
                table.put(label, cls);
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
