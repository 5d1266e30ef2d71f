/*
 * IwppCancelledException.java - a call stopped because its progress listener
 * asked to (IWPP_ECANCELED). Nothing was written to the call's outputs.
 */
package iwpp;

public class IwppCancelledException extends IwppException {
    private static final long serialVersionUID = 1L;

    public IwppCancelledException(String message) {
        super(IwppNative.ECANCELED, message);
    }
}
