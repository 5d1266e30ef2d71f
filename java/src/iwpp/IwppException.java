/*
 * IwppException.java - a failed IWPP call other than a wrong argument
 * (wrong arguments throw IllegalArgumentException). Carries the library's
 * status code and its message.
 */
package iwpp;

public class IwppException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;

    public IwppException(int status, String message) {
        super(message);
        this.status = status;
    }

    public IwppException(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** One of IwppNative.EINVAL, ENOMEM, EDEVICE, EUNSUPPORTED, EINTERNAL, ECANCELED. */
    public int getStatus() {
        return status;
    }
}
