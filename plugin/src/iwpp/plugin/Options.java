/*
 * Options.java - a command's parameters, asked through a GenericDialog (so a
 * run is macro-recordable and run(cmd, options) fills it without showing) or,
 * when AWT is headless and a GenericDialog cannot even be created (plain
 * ImageJ 1.x with -Djava.awt.headless=true), read from the macro options with
 * the very same keys. Keys are the first word of each label, lower case, as in
 * GenericDialog.
 */
package iwpp.plugin;

import ij.Macro;
import ij.gui.GenericDialog;

import java.awt.GraphicsEnvironment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class Options {
    private final GenericDialog gd;        // null when headless
    private final String macroOptions;     // headless: the options of this thread's run(), or null
    private final List<Object[]> fields = new ArrayList<Object[]>(); // headless: {kind, label, items, default}
    private int next;
    private String error;

    Options(String title) {
        if (GraphicsEnvironment.isHeadless()) {
            gd = null;
            macroOptions = Macro.getOptions();
        } else {
            gd = new GenericDialog(title);
            macroOptions = null;
        }
    }

    static String key(String label) {
        String k = label.trim();
        int sp = k.indexOf(' ');
        if (sp >= 0)
            k = k.substring(0, sp);
        int colon = k.indexOf(':');
        if (colon >= 0)
            k = k.substring(0, colon);
        return k.toLowerCase(Locale.US);
    }

    void addChoice(String label, String[] items, String def) {
        if (gd != null)
            gd.addChoice(label, items, def);
        else
            fields.add(new Object[] { "choice", label, items, def });
    }

    void addNumber(String label, double def, int digits) {
        if (gd != null)
            gd.addNumericField(label, def, digits);
        else
            fields.add(new Object[] { "number", label, null, Double.valueOf(def) });
    }

    void addString(String label, String def, int columns) {
        if (gd != null)
            gd.addStringField(label, def, columns);
        else
            fields.add(new Object[] { "string", label, null, def });
    }

    void addCheckbox(String label, boolean def) {
        if (gd != null)
            gd.addCheckbox(label, def);
        else
            fields.add(new Object[] { "check", label, null, Boolean.valueOf(def) });
    }

    void addMessage(String text) {
        if (gd != null)
            gd.addMessage(text);
    }

    /** Shows the dialog (or reads the macro options); false if cancelled. */
    boolean show() {
        if (gd != null) {
            gd.showDialog();
            return !gd.wasCanceled();
        }
        return true;
    }

    /** Headless: the first problem met while reading the options, or null. */
    String error() {
        return error;
    }

    private Object[] nextField(String kind) {
        Object[] f = fields.get(next++);
        if (!kind.equals(f[0]))
            throw new IllegalStateException("IWPP: option " + f[1] + " read as " + kind);
        return f;
    }

    private String value(Object[] f, String def) {
        if (macroOptions == null)
            return def;
        return Macro.getValue(macroOptions, key((String) f[1]), def);
    }

    String getNextChoice() {
        if (gd != null)
            return gd.getNextChoice();
        Object[] f = nextField("choice");
        String v = value(f, (String) f[3]);
        for (String item : (String[]) f[2])
            if (item.equals(v))
                return item;
        for (String item : (String[]) f[2])
            if (item.equalsIgnoreCase(v))
                return item;
        if (error == null)
            error = "\"" + v + "\" is not a valid choice for " + key((String) f[1]) + "= (valid: "
                    + String.join(", ", (String[]) f[2]) + ").";
        return (String) f[3];
    }

    double getNextNumber() {
        if (gd != null)
            return gd.getNextNumber();
        Object[] f = nextField("number");
        String v = value(f, null);
        if (v == null)
            return (Double) f[3];
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            if (error == null)
                error = "\"" + v + "\" is not a number (" + key((String) f[1]) + "=).";
            return Double.NaN;
        }
    }

    String getNextString() {
        if (gd != null)
            return gd.getNextString();
        Object[] f = nextField("string");
        return value(f, (String) f[3]);
    }

    boolean getNextBoolean() {
        if (gd != null)
            return gd.getNextBoolean();
        Object[] f = nextField("check");
        if (macroOptions == null)
            return (Boolean) f[3];
        /* As GenericDialog: a checkbox is on when its key is present in the options. */
        return Macro.getValue(macroOptions, key((String) f[1]), null) != null
                || (" " + macroOptions + " ").contains(" " + key((String) f[1]) + " ");
    }

    /** GUI only: whether the numbers read were valid. */
    boolean invalidNumber() {
        return gd != null && gd.invalidNumber();
    }
}
