/* jni_md.h for the macOS cross builds (the JDK installed here is Linux's): LP64 like
 * Linux, entry points exported by default visibility. */
#ifndef IWPP_JNI_MD_DARWIN_H
#define IWPP_JNI_MD_DARWIN_H
#define JNIEXPORT __attribute__((visibility("default")))
#define JNIIMPORT __attribute__((visibility("default")))
#define JNICALL
typedef int jint;
typedef long jlong;
typedef signed char jbyte;
#endif
