#!/usr/bin/env bash
# What the SQLite store's give-back of credits costs in SQLite itself, counted by valgrind's
# callgrind, for two forms of the same write on the `credits` table of the migrations (WITHOUT
# ROWID, primary key (scope, day), index credits_day (day, used)), 101 rows, WAL,
# synchronous=NORMAL as the store opens it:
#   two     BEGIN IMMEDIATE, one UPDATE per scope (device, then app), COMMIT (what the store does)
#   one     a single autocommit UPDATE ... WHERE day = ?2 AND scope IN (?1, ?4)
# Each form runs N and 2N give-backs; the difference over N is the per-write figure.
#
# Usage: bench/sqlite-release.sh [N (default 1000)]   (needs gcc, libsqlite3-dev and valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
n="${1:-1000}"
command -v valgrind >/dev/null && command -v gcc >/dev/null || { echo "needs valgrind and gcc" >&2; exit 2; }
bench_work_dir
table="$(sed -n '/^CREATE TABLE credits (/,/^CREATE INDEX credits_day/p' Sources/Store/Migrations/SQLiteMigrations.swift | tr '\n' ' ')"
[ -n "$table" ] || { echo "credits table not found in the migrations" >&2; exit 2; }
cat > "$work/release.c" <<C
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
static sqlite3_stmt *prepared(sqlite3 *db, const char *sql) {
  sqlite3_stmt *statement;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, 0) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); exit(1); }
  return statement;
}
static void run(sqlite3_stmt *statement) {
  int code;
  while ((code = sqlite3_step(statement)) == SQLITE_ROW) {}
  if (code != SQLITE_DONE) { fprintf(stderr, "step failed: %d\n", code); exit(1); }
  sqlite3_reset(statement);
}
int main(int argc, char **argv) {
  int single = argv[1][0] == 'o', count = atoi(argv[2]);
  sqlite3 *db;
  if (sqlite3_open(argv[3], &db) != SQLITE_OK) return 1;
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; $table", 0, 0, 0);
  char devices[100][48];
  sqlite3_exec(db, "BEGIN", 0, 0, 0);
  for (int i = 0; i < 100; i++) {
    char sql[160];
    snprintf(devices[i], sizeof devices[i], "install:device-%032d", i);
    snprintf(sql, sizeof sql, "INSERT INTO credits (scope, day, used) VALUES ('%s', 20000, 1000000000)", devices[i]);
    sqlite3_exec(db, sql, 0, 0, 0);
  }
  sqlite3_exec(db, "INSERT INTO credits (scope, day, used) VALUES ('app', 20000, 1000000000); COMMIT", 0, 0, 0);
  sqlite3_stmt *begin = prepared(db, "BEGIN IMMEDIATE"), *commit = prepared(db, "COMMIT");
  sqlite3_stmt *scope = prepared(db, "UPDATE credits SET used = max(0, used - ?3) WHERE scope = ?1 AND day = ?2");
  sqlite3_stmt *both = prepared(db, "UPDATE credits SET used = max(0, used - ?3) WHERE day = ?2 AND scope IN (?1, ?4)");
  for (int i = 0; i < count; i++) {
    if (single) {
      sqlite3_bind_text(both, 1, devices[i % 100], -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(both, 2, 20000);
      sqlite3_bind_int64(both, 3, 3);
      sqlite3_bind_text(both, 4, "app", -1, SQLITE_STATIC);
      run(both);
    } else {
      run(begin);
      sqlite3_bind_text(scope, 1, devices[i % 100], -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(scope, 2, 20000);
      sqlite3_bind_int64(scope, 3, 3);
      run(scope);
      sqlite3_bind_text(scope, 1, "app", -1, SQLITE_STATIC);
      run(scope);
      run(commit);
    }
  }
  return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}
C
gcc -O2 "$work/release.c" -o "$work/release" -lsqlite3
count() {
  local out="$work/callgrind.$1.$2"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$work/release" "$1" "$2" "$work/$1-$2.db" 2>/dev/null
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$out" | head -1
}
echo "callgrind instructions per give-back of credits (device and app scopes), N = $n and 2N"
for form in two one; do
  first=$(count "$form" "$n"); second=$(count "$form" "$((n * 2))")
  python3 -c "print('%-4s %10.0f instructions per give-back' % ('$form', ($second - $first) / $n))"
done
