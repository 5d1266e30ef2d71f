/*
 * Options.java - a command's parameters, asked through a GenericDialog (so a
 * run is macro-recordable and run(cmd, options) fills it without showing) or,
 * when AWT is headless and a GenericDialog cannot even be created (plain
 * ImageJ 1.x with -Djava.awt.headless=true), read from the macro options with
 * the very same keys. Keys are the first word of each label, lower case, as in
 * GenericDialog.
 *
 * Choices are checked on both paths before anything runs: a value given in the
 * macro options that is not one of the items is an error that names the
 * allowed values (GenericDialog alone would pop up its own message and go on
 * with the default item).
 */
package iwpp.plugin;

import ij.Macro;
import ij.gui.GenericDialog;
import ij.macro.Interpreter;
import ij.util.Tools;

import java.awt.GraphicsEnvironment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class Options {
    private final GenericDialog gd;        // null when headless
    private final String macroOptions;     // the options of this thread's run(), or null
    /* every field in order: {kind, label, items, default, smart} (the dialog's too: choices are checked here) */
    private final List<Object[]> fields = new ArrayList<Object[]>();
    private int next;
    private String error;

    Options(String title) {
        macroOptions = Macro.getOptions();
        gd = GraphicsEnvironment.isHeadless() ? null : new GenericDialog(title);
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
        addChoice(label, items, def, false);
    }

    /**
     * A choice; with @p recordOnlyIfChanged (the backend), the Recorder writes it
     * only when the user picked another item than the default.
     */
    void addChoice(String label, String[] items, String def, boolean recordOnlyIfChanged) {
        if (gd != null)
            gd.addChoice(label, items, def);
        fields.add(new Object[] { "choice", label, items, def, Boolean.valueOf(recordOnlyIfChanged) });
    }

    void addNumber(String label, double def, int digits) {
        if (gd != null)
            gd.addNumericField(label, def, digits);
        fields.add(new Object[] { "number", label, null, Double.valueOf(def), Boolean.FALSE });
    }

    void addString(String label, String def, int columns) {
        if (gd != null)
            gd.addStringField(label, def, columns);
        fields.add(new Object[] { "string", label, null, def, Boolean.FALSE });
    }

    void addCheckbox(String label, boolean def) {
        if (gd != null)
            gd.addCheckbox(label, def);
        fields.add(new Object[] { "check", label, null, Boolean.valueOf(def), Boolean.FALSE });
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

    /** The first problem met while reading the options (a value that is not valid), or null. */
    String error() {
        return error;
    }

    /** Whether this run reads macro options (run(cmd, options)) rather than a dialog the user saw. */
    boolean fromMacro() {
        return macroOptions != null;
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

    /** "a, b or c" */
    static String listOf(String[] items) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < items.length; i++) {
            if (i > 0)
                sb.append(i == items.length - 1 ? " or " : ", ");
            String it = items[i];
            sb.append(it.indexOf(' ') >= 0 ? "[" + it + "]" : it);
        }
        return sb.toString();
    }

    private void badChoice(Object[] f, String v) {
        if (error == null)
            error = "\"" + v + "\" is not a valid choice for " + key((String) f[1]) + "=; use "
                    + listOf((String[]) f[2]) + ".";
    }

    String getNextChoice() {
        Object[] f = nextField("choice");
        String[] items = (String[]) f[2];
        if (error != null)
            return (String) f[3]; // the run stops: read nothing more from the dialog
        if (gd != null) {
            String v = value(f, null);
            if (v != null && v.startsWith("&")) { // a macro variable: GenericDialog looks it up
                Interpreter interp = Interpreter.getInstance();
                String s = interp != null ? interp.getStringVariable(v.substring(1)) : null;
                if (s != null)
                    v = s;
            }
            if (v != null && !v.startsWith("&")) {
                boolean known = false;
                for (String item : items)
                    known |= item.equals(v);
                if (!known) {
                    badChoice(f, v);
                    return (String) f[3];
                }
            }
            if (!(Boolean) f[4])
                return gd.getNextChoice();
            /* GenericDialog skips a choice left at its default only in getNextChoiceIndex */
            gd.setSmartRecording(true);
            try {
                int i = gd.getNextChoiceIndex();
                return i >= 0 && i < items.length ? items[i] : (String) f[3];
            } finally {
                gd.setSmartRecording(false);
            }
        }
        String v = value(f, (String) f[3]);
        for (String item : items)
            if (item.equals(v))
                return item;
        for (String item : items)
            if (item.equalsIgnoreCase(v))
                return item;
        badChoice(f, v);
        return (String) f[3];
    }

    double getNextNumber() {
        Object[] f = nextField("number");
        if (error != null)
            return Double.NaN;
        if (gd != null) {
            /* a value GenericDialog could not read would stop it with a modal error of its own */
            String v = value(f, null);
            if (v != null && !readableNumber(v.trim())) {
                error = "\"" + v + "\" is not a number (" + key((String) f[1]) + "=).";
                return Double.NaN;
            }
            return gd.getNextNumber();
        }
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

    /** A number, or a macro variable (&name) that holds one, as GenericDialog reads them. */
    private static boolean readableNumber(String v) {
        if (v.startsWith("&")) {
            Interpreter interp = Interpreter.getInstance();
            return interp != null && !Double.isNaN(interp.getVariable2(v.substring(1)));
        }
        return v.equalsIgnoreCase("NaN") || !Double.isNaN(Tools.parseDouble(v, Double.NaN));
    }

    String getNextString() {
        Object[] f = nextField("string");
        if (error != null)
            return (String) f[3];
        if (gd != null)
            return gd.getNextString();
        return value(f, (String) f[3]);
    }

    boolean getNextBoolean() {
        Object[] f = nextField("check");
        if (error != null)
            return false;
        if (gd != null)
            return gd.getNextBoolean();
        if (macroOptions == null)
            return (Boolean) f[3];
        /* As GenericDialog: a checkbox is on when its key is present in the options. */
        return Macro.getValue(macroOptions, key((String) f[1]), null) != null
                || (" " + macroOptions + " ").contains(" " + key((String) f[1]) + " ");
    }

    /** GUI only: whether the numbers read were valid. */
    boolean invalidNumber() {
        return gd != null && error == null && gd.invalidNumber();
    }
}
