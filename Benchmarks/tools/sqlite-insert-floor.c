/*
 * The floor of the log's SQLite inserts: the same tables, statements and pragmas as SQLiteLogStorage (WAL,
 * synchronous = FULL, 16 MiB cache), 500-byte entries, driven from C with nothing else per row. Compare its CPU per
 * row with the breakdown's "SQLite insert" row to see what the Swift side adds. TABLES: 1 entries only, 2 with the
 * delivery queue, 3 with the idempotency index too (a 16-byte pseudo-random tag per row under a unique index, as
 * an event's HMAC tag is).
 *
 *   gcc -O2 Benchmarks/tools/sqlite-insert-floor.c -lsqlite3 -o /tmp/sqlite-insert-floor
 *   /tmp/sqlite-insert-floor DIRECTORY [ROWS [ROWS-PER-TRANSACTION [TABLES]]]   (defaults 100000 1000 3)
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int check(int code, int expected, sqlite3 *db, const char *what) {
    if (code == expected) return 0;
    fprintf(stderr, "%s: SQLite error %d: %s\n", what, code, sqlite3_errmsg(db));
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIRECTORY [ROWS [ROWS-PER-TRANSACTION [TABLES]]]\n", argv[0]);
        return 2;
    }
    int rows = argc > 2 ? atoi(argv[2]) : 100000;
    int batch = argc > 3 ? atoi(argv[3]) : 1000;
    int tables = argc > 4 ? atoi(argv[4]) : 3;
    if (rows <= 0 || batch <= 0 || tables < 1 || tables > 3) {
        fprintf(stderr, "ROWS and ROWS-PER-TRANSACTION must be positive, TABLES 1, 2 or 3\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/sqlite-insert-floor-%d.sqlite", argv[1], (int)getpid());
    sqlite3 *db;
    check(sqlite3_open(path, &db), SQLITE_OK, db, "open");
    check(sqlite3_exec(db,
                       "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -16384;"
                       "CREATE TABLE entries (seq INTEGER PRIMARY KEY, kind INTEGER NOT NULL, time INTEGER NOT NULL,"
                       " hash BLOB NOT NULL, bytes BLOB NOT NULL);"
                       "CREATE TABLE delivery (seq INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
                       " enqueued_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
                       " state INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '',"
                       " detail TEXT NOT NULL DEFAULT '', hash BLOB NOT NULL, changed_at INTEGER NOT NULL);"
                       "CREATE TABLE idempotency (seq INTEGER PRIMARY KEY, tag BLOB NOT NULL,"
                       " stamped INTEGER NOT NULL DEFAULT 0);"
                       "CREATE UNIQUE INDEX idempotency_tag ON idempotency (tag)",
                       0, 0, 0),
          SQLITE_OK, db, "schema");
    sqlite3_stmt *entry, *delivery, *claim;
    check(sqlite3_prepare_v2(db, "INSERT INTO entries (seq, kind, time, hash, bytes) VALUES (?, ?, ?, ?, ?)", -1,
                             &entry, 0),
          SQLITE_OK, db, "prepare entries");
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO delivery (seq, priority, enqueued_at, attempts, state, reason, detail,"
                             " hash, changed_at) VALUES (?, ?, ?, 0, 0, '', '', ?, ?)",
                             -1, &delivery, 0),
          SQLITE_OK, db, "prepare delivery");
    check(sqlite3_prepare_v2(db, "INSERT INTO idempotency (seq, tag, stamped) VALUES (?, ?, ?)", -1, &claim, 0),
          SQLITE_OK, db, "prepare idempotency");
    unsigned long long state = 0x9e3779b97f4a7c15ULL;
    unsigned char bytes[500], hash[32];
    srand(1);
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)rand();
    for (size_t i = 0; i < sizeof hash; i++) hash[i] = (unsigned char)rand();
    double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (int start = 0; start < rows; start += batch) {
        check(sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0), SQLITE_OK, db, "begin");
        for (int row = start; row < start + batch && row < rows; row++) {
            long long seq = row + 1, time = 1795000000000LL + row;
            memcpy(bytes, &seq, sizeof seq); /* distinct rows, as sealed entries are */
            memcpy(hash, &seq, sizeof seq);
            sqlite3_bind_int64(entry, 1, seq);
            sqlite3_bind_int64(entry, 2, 1);
            sqlite3_bind_int64(entry, 3, time);
            sqlite3_bind_blob(entry, 4, hash, sizeof hash, SQLITE_STATIC);
            sqlite3_bind_blob(entry, 5, bytes, sizeof bytes, SQLITE_STATIC);
            check(sqlite3_step(entry), SQLITE_DONE, db, "insert entry");
            sqlite3_reset(entry);
            if (tables == 3) {
                unsigned long long tag[2];
                for (int half = 0; half < 2; half++) { /* splitmix64: uniform, as HMAC outputs are */
                    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
                    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
                    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
                    tag[half] = z ^ (z >> 31);
                }
                sqlite3_bind_int64(claim, 1, seq);
                sqlite3_bind_blob(claim, 2, tag, sizeof tag, SQLITE_STATIC);
                sqlite3_bind_int(claim, 3, 0);
                check(sqlite3_step(claim), SQLITE_DONE, db, "insert idempotency");
                sqlite3_reset(claim);
            }
            if (tables >= 2) {
                sqlite3_bind_int64(delivery, 1, seq);
                sqlite3_bind_int64(delivery, 2, 1);
                sqlite3_bind_int64(delivery, 3, time);
                sqlite3_bind_blob(delivery, 4, hash, sizeof hash, SQLITE_STATIC);
                sqlite3_bind_int64(delivery, 5, time);
                check(sqlite3_step(delivery), SQLITE_DONE, db, "insert delivery");
                sqlite3_reset(delivery);
            }
        }
        check(sqlite3_exec(db, "COMMIT", 0, 0, 0), SQLITE_OK, db, "commit");
    }
    wall = seconds(CLOCK_MONOTONIC) - wall;
    cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    printf("%d rows of 500 B into %d table(s), %d per transaction: %.2f µs wall, %.2f µs CPU per row\n", rows, tables,
           batch, wall / rows * 1e6, cpu / rows * 1e6);
    sqlite3_finalize(entry);
    sqlite3_finalize(delivery);
    sqlite3_finalize(claim);
    sqlite3_close(db);
    char companion[4200];
    unlink(path);
    snprintf(companion, sizeof companion, "%s-wal", path);
    unlink(companion);
    snprintf(companion, sizeof companion, "%s-shm", path);
    unlink(companion);
    return 0;
}
