/* jni_md.h for the windows-x86_64 cross build: the JDK installed here is Linux's, whose
 * jni.h is portable but whose jni_md.h is not. Windows x64: 32-bit long, exported
 * entry points, and the calling convention is the platform's only one. */
#ifndef IWPP_JNI_MD_WIN32_H
#define IWPP_JNI_MD_WIN32_H
#define JNIEXPORT __declspec(dllexport)
#define JNIIMPORT __declspec(dllimport)
#define JNICALL __stdcall
typedef int jint;
typedef long long jlong;
typedef signed char jbyte;
#endif
