/* version.h — the program's version, printed by --version and recorded in
 * every file translate writes. */
#ifndef TRANSLATE_VERSION_H
#define TRANSLATE_VERSION_H
#define TRANSLATE_VERSION "0.1.0"
#endif
