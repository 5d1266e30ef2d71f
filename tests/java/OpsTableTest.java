/*
 * OpsTableTest.java - the operations' table (native/ops.def) as each side reads it: C through
 * the preprocessor (IwppNative.opTable()), Java through cmake/ops_table.cmake (IwppOp and the
 * jar's plugins.config). A line that one side reads differently, or a stale generated file,
 * fails here; so does a changed command label (the labels are the public macro interface).
 */
package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.BeforeClass;
import org.junit.Test;

public class OpsTableTest {

    @BeforeClass
    public static void load() {
        IwppNative.requireLoaded();
    }

    /** The C table and the Java enum: the same ops, ids, kinds, outputs and methods. */
    @Test
    public void javaEnumEqualsCTable() {
        String[] c = IwppNative.opTable();
        IwppOp[] j = IwppOp.values();
        List<String> fromJava = new ArrayList<String>();
        for (IwppOp o : j)
            fromJava.add(o.name() + " " + o.kind + " " + o.out + " " + o.method);
        assertEquals(fromJava, Arrays.asList(c));
        for (IwppOp o : j)
            assertEquals(o.ordinal(), o.id());
    }

    /** Each op names a public static method of IwppNative, and the plugin class that runs it exists. */
    @Test
    public void methodsAndClassesExist() throws Exception {
        for (IwppOp o : IwppOp.values()) {
            boolean found = false;
            for (Method m : IwppNative.class.getMethods())
                found |= m.getName().equals(o.method) && Modifier.isStatic(m.getModifiers());
            assertTrue(o + ": IwppNative." + o.method + " is missing", found);
            assertNotNull(Class.forName(o.pluginClass));
            assertEquals(o, IwppOp.forCommand(o.pluginClass, o.argument));
        }
    }

    /** The labels are macro names: the table must keep them (a new op adds one at its place). */
    @Test
    public void commandLabelsAreStable() {
        String[] expected = { "Morphological Reconstruction (IWPP)", "Distance Transform (IWPP)",
                "Fill Holes (IWPP)", "Kill Borders (IWPP)", "Regional Maxima (IWPP)", "Regional Minima (IWPP)",
                "H-Maxima (IWPP)", "H-Minima (IWPP)", "Opening by Reconstruction (IWPP)",
                "Closing by Reconstruction (IWPP)", "Extended Maxima (IWPP)", "Extended Minima (IWPP)",
                "Impose Minima (IWPP)", "Connected Components Labeling (IWPP)",
                "Marker-controlled Watershed (IWPP)", "Distance Transform Watershed (IWPP)",
                "Remove Border Labels (IWPP)", "Label Size Filtering (IWPP)" };
        List<String> have = new ArrayList<String>();
        for (IwppOp o : IwppOp.values())
            have.add(o.command);
        for (String e : expected)
            assertTrue("command \"" + e + "\" is gone from native/ops.def", have.contains(e));
    }

    /** The jar's plugins.config: one line per op, in the table's order, then the settings. */
    @Test
    public void pluginsConfigFollowsTheTable() throws Exception {
        InputStream in = OpsTableTest.class.getResourceAsStream("/plugins.config");
        assertNotNull("plugins.config in the plugin jar", in);
        List<String> lines = new ArrayList<String>();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line; (line = r.readLine()) != null;)
            if (!line.startsWith("#") && !line.trim().isEmpty())
                lines.add(line);
        r.close();
        List<String> expected = new ArrayList<String>();
        for (IwppOp o : IwppOp.values())
            expected.add(o.configLine());
        expected.add("Plugins>IWPP, \"IWPP Settings...\", iwpp.plugin.SettingsCommand");
        assertEquals(expected, lines);
    }

    /** An entry point refuses an op of another kind (the ids come from Java: a stale jar). */
    @Test
    public void entryRefusesOpOfAnotherKind() throws Exception {
        Method m = IwppNative.class.getDeclaredMethod("opFilter", int.class, int.class, int.class, int.class,
                long.class, String.class, IwppNative.Progress.class, Object[].class, int.class, int.class,
                double.class, int.class, Object[].class);
        m.setAccessible(true);
        byte[][] img = { new byte[4] }, out = { new byte[4] };
        for (int id : new int[] { IwppOp.LABEL.id(), -1, IwppOp.values().length }) {
            try {
                m.invoke(null, id, IwppNative.BACKEND_CPU, 0, 1, 0L, null, null, img, 2, 2, 0.0, 4, out);
                fail("op " + id + " accepted by opFilter");
            } catch (InvocationTargetException e) {
                assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof IllegalArgumentException);
            }
        }
        try {
            IwppNative.filter(IwppOp.LABEL, IwppNative.BACKEND_CPU, 0, 1, 0L, null, null, img, 2, 2, 0, 4, out);
            fail("IwppNative.filter ran LABEL");
        } catch (IllegalArgumentException expected) {
        }
        /* and runs its own: fill holes of an all-zero image is all zero */
        IwppNative.filter(IwppOp.FILL_HOLES, IwppNative.BACKEND_CPU, 0, 1, 0L, null, null, img, 2, 2, 0, 4, out);
        assertEquals(0, out[0][0]);
    }
}
