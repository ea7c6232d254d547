#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H

// Debian's libsqlite3 is compiled with these, but the header only declares the APIs when the
// macros are defined before inclusion.
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#define SQLITE_ENABLE_SESSION 1
#include <sqlite3.h>

// Swift cannot call C variadic functions; these fixed-arity wrappers expose the forms we use.
static inline int strata_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

// sqlite3_config is variadic as well; this is its SQLITE_CONFIG_MEMSTATUS form.
static inline int strata_sqlite3_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type strata_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
