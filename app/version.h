/* version.h — the program's version, printed by --version and recorded in
 * the attention JSON (and so in the HTML page that embeds it). */
#ifndef TRANSLATE_VERSION_H
#define TRANSLATE_VERSION_H
#define TRANSLATE_VERSION "0.1.0"
#endif
