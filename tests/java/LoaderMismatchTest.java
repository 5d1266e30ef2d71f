package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * In a JVM of its own (before IwppNative is initialised): a library of another
 * version on java.library.path is skipped with a note, and the jar's copy is loaded.
 */
public class LoaderMismatchTest {
    /** The folder of the other version's library, removed after the test. */
    @Rule
    public final TemporaryFolder scratch = new TemporaryFolder();

    @Test
    public void otherVersionOnLibraryPathIsSkipped() throws IOException {
        String platform = NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        String file = NativeLoader.fileName(platform);
        InputStream in = NativeLoader.class.getResourceAsStream("/native/" + platform + "/" + file);
        assertNotNull(in);
        byte[] b;
        try {
            b = new byte[0];
            byte[] chunk = new byte[1 << 16];
            java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
            for (int n; (n = in.read(chunk)) > 0;)
                buf.write(chunk, 0, n);
            b = buf.toByteArray();
        } finally {
            in.close();
        }
        /* the same library, its marker saying 0.0.1 */
        String mine = NativeLoader.MARKER + IwppNative.VERSION + ";";
        String other = NativeLoader.MARKER + "0.0.1;";
        assertEquals(mine.length(), other.length());
        String s = new String(b, StandardCharsets.ISO_8859_1);
        int at = s.indexOf(mine);
        assertTrue("marker not found", at >= 0);
        byte[] o = other.getBytes(StandardCharsets.ISO_8859_1);
        System.arraycopy(o, 0, b, at, o.length);
        File dir = scratch.newFolder("iwpp-libpath");
        File fake = new File(dir, file);
        FileOutputStream out = new FileOutputStream(fake);
        try {
            out.write(b);
        } finally {
            out.close();
        }
        System.setProperty("java.library.path", dir.getPath());

        assertTrue(String.valueOf(IwppNative.loaderNotes()), IwppNative.isLoaded());
        assertFalse(IwppNative.libraryLocation().startsWith(dir.getPath()));
        assertEquals(IwppNative.VERSION, IwppNative.version());
        boolean noted = false;
        for (String n : IwppNative.loaderNotes())
            noted |= n.contains(fake.getPath()) && n.contains("is IWPP 0.0.1, this plugin is " + IwppNative.VERSION);
        assertTrue(String.valueOf(IwppNative.loaderNotes()), noted);
    }
}
