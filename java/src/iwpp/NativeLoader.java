/*
 * NativeLoader.java - finds, checks, extracts and loads the IWPP native library.
 *
 * The jar carries one library per platform under native/<os>-<arch>/ (linux-x86_64,
 * linux-aarch64, windows-x86_64, macos-x86_64, macos-arm64). Order:
 *  1. -Diwpp.jni.library=<file>: that file (refused if its version is not ours);
 *  2. a library of this platform on java.library.path or in Fiji's lib/<platform>
 *     folder, if its version is ours (skipped, with a note, otherwise);
 *  3. the jar's copy for this platform, extracted to the per-user cache
 *     (Linux: $XDG_CACHE_HOME or ~/.cache; macOS: ~/Library/Caches; Windows:
 *     %LOCALAPPDATA%; -Diwpp.cache.dir overrides) under iwpp/<version>/, or to a
 *     folder in java.io.tmpdir when the cache cannot be written. Extracted copies
 *     of other versions are removed from the cache.
 *
 * A library's version is read from the file before it is loaded (the glue embeds
 * "IWPP_JNI_VERSION=<major.minor.patch>;"): once a JVM has loaded a library its
 * native methods stay bound to it, so a wrong one must never be loaded.
 *
 * The methods taking explicit names and folders are package-private for the tests.
 */
package iwpp;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32;

final class NativeLoader {

    static final String LIBRARY_NAME = "iwpp_jni";
    static final String MARKER = "IWPP_JNI_VERSION=";

    private static final List<String> NOTES = Collections.synchronizedList(new ArrayList<String>());

    private NativeLoader() {
    }

    /** What the loader skipped or fell back from, in order (for logs and tests). */
    static List<String> notes() {
        synchronized (NOTES) {
            return new ArrayList<String>(NOTES);
        }
    }

    private static void note(String s) {
        NOTES.add(s);
        System.err.println("IWPP: " + s);
    }

    /**
     * The jar's folder name for a platform ("linux-x86_64", "linux-aarch64", "windows-x86_64",
     * "macos-x86_64", "macos-arm64"), or null if the jar has no library for it.
     */
    static String platform(String osName, String osArch) {
        String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
        String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64") || arch.equals("x64")
                || arch.equals("x86-64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        if (os.startsWith("linux")) {
            if (x64)
                return "linux-x86_64";
            if (arm64)
                return "linux-aarch64";
        } else if (os.startsWith("windows")) {
            if (x64)
                return "windows-x86_64";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            if (x64)
                return "macos-x86_64";
            if (arm64)
                return "macos-arm64";
        }
        return null;
    }

    /** The library's file name on a platform (as System.mapLibraryName there). */
    static String fileName(String platform) {
        if (platform.startsWith("windows"))
            return LIBRARY_NAME + ".dll";
        if (platform.startsWith("macos"))
            return "lib" + LIBRARY_NAME + ".dylib";
        return "lib" + LIBRARY_NAME + ".so";
    }

    /** Fiji's lib/ sub-folders where a library for this platform may be installed. */
    static String[] fijiLibDirs(String platform) {
        if (platform.equals("linux-x86_64"))
            return new String[] { "linux64", platform };
        if (platform.equals("linux-aarch64"))
            return new String[] { "linux-arm64", platform };
        if (platform.equals("windows-x86_64"))
            return new String[] { "win64", platform };
        if (platform.equals("macos-arm64"))
            return new String[] { "macos-arm64", "macosx", platform };
        return new String[] { "macosx", platform };
    }

    /** The per-user cache folder (without iwpp/<version>) for a platform. */
    static File userCacheBase(String platform, String userHome, String xdgCacheHome, String localAppData) {
        if (platform.startsWith("windows")) {
            if (localAppData != null && !localAppData.isEmpty())
                return new File(localAppData);
            return new File(new File(new File(userHome), "AppData"), "Local");
        }
        if (platform.startsWith("macos"))
            return new File(new File(new File(userHome), "Library"), "Caches");
        if (xdgCacheHome != null && !xdgCacheHome.isEmpty())
            return new File(xdgCacheHome);
        return new File(new File(userHome), ".cache");
    }

    /**
     * The version a library file declares (its embedded marker), or null if it has none.
     * Reads the whole file once (the libraries are a few MB).
     */
    static String versionOf(File f) throws IOException {
        byte[] b = readAll(new FileInputStream(f));
        byte[] m = MARKER.getBytes(StandardCharsets.US_ASCII);
        outer: for (int i = 0; i + m.length < b.length; i++) {
            for (int k = 0; k < m.length; k++)
                if (b[i + k] != m[k])
                    continue outer;
            int start = i + m.length, end = start;
            while (end < b.length && end - start < 32 && b[end] != ';' && b[end] != 0)
                end++;
            if (end < b.length && b[end] == ';')
                return new String(b, start, end - start, StandardCharsets.US_ASCII);
        }
        return null;
    }

    /** Null if @p f is a library of @p version, else why not (a sentence). */
    static String mismatch(File f, String version) {
        try {
            String v = versionOf(f);
            if (v == null)
                return f + " carries no IWPP version (a library of IWPP before 0.1.0, or another file)";
            if (!v.equals(version))
                return f + " is IWPP " + v + ", this plugin is " + version;
            return null;
        } catch (IOException e) {
            return f + " cannot be read: " + e.getMessage();
        }
    }

    /**
     * The folder to extract into: base/iwpp/version if it can be written, else a folder
     * of this user in @p tmpDir (noted). Creates it.
     */
    static File extractionDir(File cacheBase, String tmpDir, String userName, String version) throws IOException {
        File dir = new File(new File(cacheBase, "iwpp"), version);
        if (writableDir(dir))
            return dir;
        String who = userName == null ? "user" : userName.replaceAll("[^A-Za-z0-9._-]", "_");
        File tmp = new File(new File(tmpDir, "iwpp-" + who), version);
        note("the cache folder " + dir + " cannot be written; the native library goes to " + tmp);
        if (writableDir(tmp))
            return tmp;
        File fresh = Files.createTempDirectory("iwpp-" + version + "-").toFile();
        fresh.deleteOnExit();
        note(tmp + " cannot be written either; using " + fresh);
        return fresh;
    }

    private static boolean writableDir(File dir) {
        if (!dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory())
            return false;
        try {
            File probe = File.createTempFile("probe-", ".tmp", dir);
            if (!probe.delete())
                probe.deleteOnExit();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Removes what earlier versions extracted under base/iwpp/ (every folder but
     * @p version's) and, in @p version's folder, libraries other than @p keep.
     * Best effort: a file another process holds open (Windows) stays. Returns the
     * number of files and folders removed.
     */
    static int removeStale(File cacheBase, String version, File keep) {
        File root = new File(cacheBase, "iwpp");
        File[] entries = root.listFiles();
        int removed = 0;
        if (entries == null)
            return 0;
        for (File e : entries) {
            if (e.isDirectory() && !e.getName().equals(version)) {
                removed += deleteTree(e);
            } else if (e.isDirectory() && keep != null) {
                File[] libs = e.listFiles();
                if (libs == null)
                    continue;
                for (File f : libs)
                    if (f.isFile() && f.getName().contains(LIBRARY_NAME) && !f.equals(keep)
                            && !f.getName().endsWith(".tmp") && f.delete())
                        removed++;
            }
        }
        return removed;
    }

    private static int deleteTree(File f) {
        int n = 0;
        File[] kids = f.isDirectory() ? f.listFiles() : null;
        if (kids != null)
            for (File k : kids)
                n += deleteTree(k);
        if (f.delete())
            n++;
        return n;
    }

    /* ------------------------------------------------------------------ loading */

    /** Loads the library as described at the top; returns the file loaded. */
    static String load(String version) throws IOException {
        String explicit = System.getProperty("iwpp.jni.library");
        if (explicit != null && !explicit.isEmpty()) {
            File f = new File(explicit).getAbsoluteFile();
            String why = mismatch(f, version);
            if (why != null)
                throw new IOException("-Diwpp.jni.library: " + why + "; remove the option or point it to "
                        + "the library of this version");
            return loadFile(f);
        }
        String platform = platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        if (platform == null)
            throw new IOException("this plugin has no native library for " + System.getProperty("os.name")
                    + " on " + System.getProperty("os.arch") + " (it has linux-x86_64, linux-aarch64, "
                    + "windows-x86_64, macos-x86_64 and macos-arm64); put a " + System.mapLibraryName(LIBRARY_NAME)
                    + " built for this system on java.library.path");
        String file = fileName(platform);
        List<File> candidates = new ArrayList<File>();
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator))
            if (!dir.isEmpty())
                candidates.add(new File(dir, file));
        for (String prop : new String[] { "fiji.dir", "ij.dir" }) {
            String root = System.getProperty(prop);
            if (root != null)
                for (String sub : fijiLibDirs(platform))
                    candidates.add(new File(new File(new File(root, "lib"), sub), file));
        }
        for (File f : candidates) {
            if (!f.isFile())
                continue;
            String why = mismatch(f, version);
            if (why == null)
                return loadFile(f);
            note("skipped " + why + "; the copy inside the plugin is used instead");
        }
        return loadFile(extract(platform, file, version));
    }

    private static File extract(String platform, String file, String version) throws IOException {
        String resource = "/native/" + platform + "/" + file;
        InputStream in = NativeLoader.class.getResourceAsStream(resource);
        if (in == null)
            throw new IOException("the plugin jar holds no " + resource.substring(1) + " and no " + file
                    + " of IWPP " + version + " was found on java.library.path");
        byte[] bytes = readAll(in);
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length);
        String override = System.getProperty("iwpp.cache.dir");
        File base = override != null && !override.isEmpty() ? new File(override)
                : userCacheBase(platform, System.getProperty("user.home"), System.getenv("XDG_CACHE_HOME"),
                        System.getenv("LOCALAPPDATA"));
        File dir = extractionDir(base, System.getProperty("java.io.tmpdir"), System.getProperty("user.name"),
                version);
        boolean inCache = dir.equals(new File(new File(base, "iwpp"), version));
        /* The checksum in the name tells builds of one version apart, so an existing
         * file is never rewritten while another JVM may have it mapped. */
        int dot = file.lastIndexOf('.');
        File target = new File(dir, String.format("%s-%08x%s", file.substring(0, dot), crc.getValue(),
                file.substring(dot)));
        if (!(target.isFile() && target.length() == bytes.length)) {
            File tmp = File.createTempFile("extract-", ".tmp", dir);
            try {
                OutputStream out = new FileOutputStream(tmp);
                try {
                    out.write(bytes);
                } finally {
                    out.close();
                }
                try {
                    Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    /* another JVM may have put it there first */
                    if (!(target.isFile() && target.length() == bytes.length))
                        throw e;
                }
            } finally {
                if (tmp.exists() && !tmp.delete())
                    tmp.deleteOnExit();
            }
        }
        if (inCache)
            removeStale(base, version, target);
        return target;
    }

    private static String loadFile(File f) throws IOException {
        String abs = f.getAbsolutePath();
        try {
            System.load(abs);
            return abs;
        } catch (UnsatisfiedLinkError e) {
            String m = String.valueOf(e.getMessage());
            if (!m.contains("another classloader"))
                throw e;
            /* ImageJ re-created its plugin class loader (e.g. after Help>Refresh
             * Menus): a JVM loads one file in one class loader only, so load a copy. */
            String name = f.getName();
            int dot = name.lastIndexOf('.');
            File copy = File.createTempFile(name.substring(0, dot) + "-", name.substring(dot), f.getParentFile());
            copy.deleteOnExit();
            Files.copy(f.toPath(), copy.toPath(), StandardCopyOption.REPLACE_EXISTING);
            System.load(copy.getAbsolutePath());
            return copy.getAbsolutePath();
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream(1 << 20);
            byte[] chunk = new byte[1 << 16];
            for (int n; (n = in.read(chunk)) > 0;)
                buf.write(chunk, 0, n);
            return buf.toByteArray();
        } finally {
            in.close();
        }
    }
}
