package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The loader's logic: platform names, cache folders and their fallback, versions, stale copies. */
public class NativeLoaderTest {
    /** Scratch files and folders, removed after each test (they piled up in /tmp, a few a run). */
    @Rule
    public final TemporaryFolder scratch = new TemporaryFolder();

    @Test
    public void platformNames() {
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLoader.platform("Linux", "aarch64"));
        assertEquals("windows-x86_64", NativeLoader.platform("Windows 10", "amd64"));
        assertEquals("windows-x86_64", NativeLoader.platform("Windows Server 2019", "x86_64"));
        assertEquals("macos-x86_64", NativeLoader.platform("Mac OS X", "x86_64"));
        assertEquals("macos-arm64", NativeLoader.platform("Mac OS X", "aarch64"));
        assertEquals("macos-arm64", NativeLoader.platform("Darwin", "arm64"));
        assertNull(NativeLoader.platform("Windows 11", "aarch64"));
        assertNull(NativeLoader.platform("Linux", "x86"));
        assertNull(NativeLoader.platform("Linux", "ppc64le"));
        assertNull(NativeLoader.platform("SunOS", "sparcv9"));
        assertNull(NativeLoader.platform("FreeBSD", "amd64"));
        assertNull(NativeLoader.platform(null, null));
        assertEquals(NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch")),
                IwppNative.platform());
    }

    @Test
    public void fileNames() {
        assertEquals("libiwpp_jni.so", NativeLoader.fileName("linux-x86_64"));
        assertEquals("libiwpp_jni.so", NativeLoader.fileName("linux-aarch64"));
        assertEquals("iwpp_jni.dll", NativeLoader.fileName("windows-x86_64"));
        assertEquals("libiwpp_jni.dylib", NativeLoader.fileName("macos-x86_64"));
        assertEquals("libiwpp_jni.dylib", NativeLoader.fileName("macos-arm64"));
        /* this JVM's own convention agrees for its platform */
        assertEquals(System.mapLibraryName("iwpp_jni"), NativeLoader.fileName(IwppNative.platform()));
        assertEquals("win64", NativeLoader.fijiLibDirs("windows-x86_64")[0]);
        assertEquals("linux64", NativeLoader.fijiLibDirs("linux-x86_64")[0]);
    }

    @Test
    public void cacheFolders() {
        assertEquals(new File("/home/u/.cache"), NativeLoader.userCacheBase("linux-x86_64", "/home/u", null, null));
        assertEquals(new File("/xdg"), NativeLoader.userCacheBase("linux-aarch64", "/home/u", "/xdg", null));
        assertEquals(new File("/Users/u/Library/Caches"),
                NativeLoader.userCacheBase("macos-arm64", "/Users/u", "/xdg", null));
        assertEquals(new File("C:/Users/u/AppData/Local"),
                NativeLoader.userCacheBase("windows-x86_64", "C:/Users/u", null, ""));
        assertEquals(new File("D:/local"), NativeLoader.userCacheBase("windows-x86_64", "C:/Users/u", null, "D:/local"));
    }

    @Test
    public void cacheThatCannotBeWrittenFallsBackToTemp() throws IOException {
        File tmp = scratch.newFolder("iwpp-loader-test");
        /* a cache "folder" below a plain file can never be created, even as root */
        File blocker = new File(tmp, "not-a-folder");
        assertTrue(blocker.createNewFile());
        File dir = NativeLoader.extractionDir(blocker, tmp.getPath(), "some user", "9.8.7");
        assertEquals(new File(new File(tmp, "iwpp-some_user"), "9.8.7"), dir);
        assertTrue(dir.isDirectory());
        boolean noted = false;
        for (String n : NativeLoader.notes())
            noted |= n.contains("cannot be written") && n.contains(blocker.getPath());
        assertTrue(NativeLoader.notes().toString(), noted);
        /* a writable cache is used as it is */
        File cache = new File(tmp, "cache");
        assertEquals(new File(new File(cache, "iwpp"), "9.8.7"), NativeLoader.extractionDir(cache, tmp.getPath(), "u", "9.8.7"));
    }

    @Test
    public void staleVersionsAreRemoved() throws IOException {
        File base = scratch.newFolder("iwpp-stale-test");
        File root = new File(base, "iwpp");
        File old = new File(root, "0.0.9");
        File cur = new File(root, "0.1.0");
        assertTrue(old.mkdirs() && cur.mkdirs());
        File oldLib = new File(old, "libiwpp_jni-12345678.so");
        File otherBuild = new File(cur, "libiwpp_jni-aaaaaaaa.so");
        File keep = new File(cur, "libiwpp_jni-bbbbbbbb.so");
        File unrelated = new File(cur, "notes.txt");
        for (File f : new File[] { oldLib, otherBuild, keep, unrelated })
            assertTrue(f.createNewFile());
        int removed = NativeLoader.removeStale(base, "0.1.0", keep);
        assertEquals(3, removed); /* 0.0.9/ and its file, the other build */
        assertFalse(old.exists());
        assertFalse(otherBuild.exists());
        assertTrue(keep.exists());
        assertTrue(unrelated.exists());
        assertEquals(0, NativeLoader.removeStale(new File(base, "nothing-here"), "0.1.0", null));
    }

    @Test
    public void versionMarker() throws IOException {
        File f = scratch.newFile("marker.so");
        write(f, "\u007fELF junk IWPP_JNI_VERSION=1.2.3; more junk");
        assertEquals("1.2.3", NativeLoader.versionOf(f));
        assertNull(NativeLoader.mismatch(f, "1.2.3"));
        String why = NativeLoader.mismatch(f, "0.1.0");
        assertNotNull(why);
        assertTrue(why, why.contains("is IWPP 1.2.3, this plugin is 0.1.0"));
        write(f, "no marker here IWPP_JNI_VERSION= but unterminated");
        assertNull(NativeLoader.versionOf(f));
        assertTrue(NativeLoader.mismatch(f, "0.1.0").contains("carries no IWPP version"));
    }

    /** Every library the jar carries declares this version (the build says which platforms it packed). */
    @Test
    public void jarLibrariesCarryTheVersion() throws IOException {
        String platforms = System.getProperty("iwpp.test.platforms", IwppNative.platform());
        for (String p : platforms.split(",")) {
            if (p.isEmpty())
                continue;
            String res = "/native/" + p + "/" + NativeLoader.fileName(p);
            InputStream in = NativeLoader.class.getResourceAsStream(res);
            assertNotNull("the jar holds no " + res, in);
            File f = File.createTempFile("jar-native", ".bin");
            Files.copy(in, f.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            in.close();
            assertEquals(res, IwppNative.VERSION, NativeLoader.versionOf(f));
            assertTrue(f.delete());
        }
        assertTrue(IwppNative.isLoaded());
        assertEquals(IwppNative.VERSION, NativeLoader.versionOf(new File(IwppNative.libraryLocation())));
    }

    static void write(File f, String s) throws IOException {
        FileOutputStream out = new FileOutputStream(f);
        try {
            out.write(s.getBytes(StandardCharsets.ISO_8859_1));
        } finally {
            out.close();
        }
    }
}
