/* version.h - the project version */
#ifndef AO_VERSION_H
#define AO_VERSION_H
#define AO_VERSION "0.1.0"
#endif
