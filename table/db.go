package table

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rowttl/rowttl"
)

// DefaultDatabase is the database every data directory has from its first
// open on, and the current database of a new SQL session.
const DefaultDatabase = "default"

// maxNameLen bounds database and table names.
const maxNameLen = 64

// Prefixes of the scratch directories a database directory may hold for a
// moment: a table being created, a table being dropped. OpenDB removes
// leftovers (a crash in the middle of CREATE or DROP). Valid names never
// start with a dot, so they cannot collide.
const (
	creatingPrefix = ".creating-"
	droppingPrefix = ".dropping-"
)

// DB is a data directory holding databases of tables:
//
//	<dir>/LOCK                      held while the DB is open
//	<dir>/<database>/               one directory per database
//	<dir>/<database>/<table>/       what Create makes
//
// Names are case-sensitive (as Doris table names are on Linux) and made of
// ASCII letters, digits and '_' (not starting with a digit), at most 64
// bytes, so that a name never escapes its directory.
//
// CREATE TABLE is atomic: the table is made in a scratch directory and
// renamed into place, so a crash or a failed validation leaves nothing
// under the table's name. DROP renames the table away (durably, with the
// directory synced) before deleting its files. All methods are safe for
// concurrent use; DDL is serialised by one mutex.
type DB struct {
	dir  string
	opts Options
	lock *fileLock

	mu struct {
		sync.Mutex
		// tables caches open tables by "db/name".
		tables map[string]*Table
		// seq numbers scratch directories.
		seq    uint64
		closed bool
	}
}

// OpenDB opens (creating it if missing) the data directory dir and its
// default database, and removes what a crash left in the middle of a
// CREATE or DROP. Only one DB at a time may have a directory open.
func OpenDB(dir string, opts *Options) (*DB, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if err := o.FS.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	lock, err := lockDirFS(o.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s is in use by another process: %w", dir, err)
	}
	db := &DB{dir: dir, opts: o, lock: lock}
	db.mu.tables = map[string]*Table{}
	if err := db.createDatabaseDir(DefaultDatabase, true); err != nil {
		lock.release()
		return nil, err
	}
	if err := db.removeScratch(dir); err != nil {
		lock.release()
		return nil, err
	}
	dbs, err := db.listDirs(dir)
	if err != nil {
		lock.release()
		return nil, err
	}
	for _, name := range dbs {
		if err := db.removeScratch(filepath.Join(dir, name)); err != nil {
			lock.release()
			return nil, err
		}
	}
	return db, nil
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// ValidateName checks a database or table name.
func ValidateName(kind, name string) error {
	if name == "" {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "empty %s name", kind)
	}
	if len(name) > maxNameLen {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "%s name %q is longer than %d bytes", kind, name, maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "invalid %s name %q: use letters, digits and '_', not starting with a digit", kind, name)
		}
	}
	return nil
}

func (db *DB) checkOpenLocked() error {
	if db.mu.closed {
		return rowttl.Errorf(rowttl.ErrClosed, "data directory %s", db.dir)
	}
	return nil
}

// exists reports whether path exists.
func (db *DB) exists(path string) (bool, error) {
	_, err := db.opts.FS.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// listDirs returns the entries of dir that are directories with valid
// names, sorted.
func (db *DB) listDirs(dir string) ([]string, error) {
	names, err := db.opts.FS.List(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if ValidateName("", n) != nil {
			continue
		}
		st, err := db.opts.FS.Stat(filepath.Join(dir, n))
		if err != nil || !st.IsDir() {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// removeScratch deletes the scratch directories a crash left in a database
// directory.
func (db *DB) removeScratch(dbDir string) error {
	names, err := db.opts.FS.List(dbDir)
	if err != nil {
		return err
	}
	removed := false
	for _, n := range names {
		if strings.HasPrefix(n, creatingPrefix) || strings.HasPrefix(n, droppingPrefix) {
			if err := db.opts.FS.RemoveAll(filepath.Join(dbDir, n)); err != nil {
				return fmt.Errorf("remove leftover %s: %w", filepath.Join(dbDir, n), err)
			}
			removed = true
		}
	}
	if removed {
		return db.opts.FS.SyncDir(dbDir)
	}
	return nil
}

func (db *DB) createDatabaseDir(name string, ifNotExists bool) error {
	path := filepath.Join(db.dir, name)
	ok, err := db.exists(path)
	if err != nil {
		return err
	}
	if ok {
		if ifNotExists {
			return nil
		}
		return rowttl.Errorf(rowttl.ErrExists, "Can't create database '%s'; database exists", name)
	}
	if err := db.opts.FS.MkdirAll(path); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return db.opts.FS.SyncDir(db.dir)
}

// CreateDatabase creates a database. Without ifNotExists an existing one is
// an ErrExists error.
func (db *DB) CreateDatabase(name string, ifNotExists bool) error {
	if err := ValidateName("database", name); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return err
	}
	return db.createDatabaseDir(name, ifNotExists)
}

// HasDatabase reports whether the database exists.
func (db *DB) HasDatabase(name string) (bool, error) {
	if ValidateName("database", name) != nil {
		return false, nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return false, err
	}
	return db.exists(filepath.Join(db.dir, name))
}

func (db *DB) requireDatabaseLocked(name string) error {
	if err := ValidateName("database", name); err != nil {
		return err
	}
	ok, err := db.exists(filepath.Join(db.dir, name))
	if err != nil {
		return err
	}
	if !ok {
		return rowttl.Errorf(rowttl.ErrNotFound, "Unknown database '%s'", name)
	}
	return nil
}

// DropDatabase closes and removes a database and all its tables. Without
// ifExists a missing database is an ErrNotFound error.
func (db *DB) DropDatabase(name string, ifExists bool) error {
	if err := ValidateName("database", name); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return err
	}
	path := filepath.Join(db.dir, name)
	ok, err := db.exists(path)
	if err != nil {
		return err
	}
	if !ok {
		if ifExists {
			return nil
		}
		return rowttl.Errorf(rowttl.ErrNotFound, "Can't drop database '%s'; database doesn't exist", name)
	}
	prefix := name + "/"
	for k, t := range db.mu.tables {
		if strings.HasPrefix(k, prefix) {
			t.Close()
			delete(db.mu.tables, k)
		}
	}
	// Rename first so that the name is gone durably even if deleting the
	// files is cut short; OpenDB finishes the job.
	db.mu.seq++
	scratch := filepath.Join(db.dir, droppingPrefix+name+"-"+strconv.FormatUint(db.mu.seq, 10))
	if err := db.opts.FS.Rename(path, scratch); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	if err := db.opts.FS.SyncDir(db.dir); err != nil {
		return err
	}
	if err := db.opts.FS.RemoveAll(scratch); err != nil {
		return fmt.Errorf("drop database %s: remove files: %w", name, err)
	}
	if err := db.opts.FS.SyncDir(db.dir); err != nil {
		return err
	}
	if name == DefaultDatabase {
		// The default database always exists.
		return db.createDatabaseDir(DefaultDatabase, true)
	}
	return nil
}

// Databases returns the database names, sorted.
func (db *DB) Databases() ([]string, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	return db.listDirs(db.dir)
}

func tableKey(dbName, name string) string { return dbName + "/" + name }

// CreateTable creates the table dbName.name. Without ifNotExists an
// existing table is an ErrExists error; with it, the existing table is
// returned and def is ignored. A failed CREATE leaves nothing behind.
func (db *DB) CreateTable(dbName, name string, def *Definition, ifNotExists bool) (*Table, error) {
	if err := ValidateName("table", name); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	if err := db.requireDatabaseLocked(dbName); err != nil {
		return nil, err
	}
	dbDir := filepath.Join(db.dir, dbName)
	path := filepath.Join(dbDir, name)
	ok, err := db.exists(path)
	if err != nil {
		return nil, err
	}
	if ok {
		if ifNotExists {
			return db.tableLocked(dbName, name)
		}
		return nil, rowttl.Errorf(rowttl.ErrExists, "Table '%s.%s' already exists", dbName, name)
	}
	// Validate before touching the disk, so that definition errors come
	// back unchanged and nothing is created.
	if _, _, err := Validate(def); err != nil {
		return nil, err
	}
	db.mu.seq++
	scratch := filepath.Join(dbDir, creatingPrefix+name+"-"+strconv.FormatUint(db.mu.seq, 10))
	t, err := Create(scratch, def, &db.opts)
	if err != nil {
		db.opts.FS.RemoveAll(scratch)
		return nil, err
	}
	if err := t.Close(); err != nil {
		db.opts.FS.RemoveAll(scratch)
		return nil, err
	}
	if err := db.opts.FS.Rename(scratch, path); err != nil {
		db.opts.FS.RemoveAll(scratch)
		return nil, fmt.Errorf("create table %s.%s: %w", dbName, name, err)
	}
	if err := db.opts.FS.SyncDir(dbDir); err != nil {
		return nil, err
	}
	return db.tableLocked(dbName, name)
}

// DropTable closes the table dbName.name and removes its files. Without
// ifExists a missing table is an ErrNotFound error. The name is gone
// durably when DropTable returns nil.
func (db *DB) DropTable(dbName, name string, ifExists bool) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return err
	}
	if err := db.requireDatabaseLocked(dbName); err != nil {
		return err
	}
	if err := ValidateName("table", name); err != nil {
		if ifExists {
			return nil
		}
		return err
	}
	dbDir := filepath.Join(db.dir, dbName)
	path := filepath.Join(dbDir, name)
	ok, err := db.exists(path)
	if err != nil {
		return err
	}
	if !ok {
		if ifExists {
			return nil
		}
		return rowttl.Errorf(rowttl.ErrNotFound, "Unknown table '%s.%s'", dbName, name)
	}
	k := tableKey(dbName, name)
	if t, ok := db.mu.tables[k]; ok {
		t.Close()
		delete(db.mu.tables, k)
	}
	db.mu.seq++
	scratch := filepath.Join(dbDir, droppingPrefix+name+"-"+strconv.FormatUint(db.mu.seq, 10))
	if err := db.opts.FS.Rename(path, scratch); err != nil {
		return fmt.Errorf("drop table %s.%s: %w", dbName, name, err)
	}
	if err := db.opts.FS.SyncDir(dbDir); err != nil {
		return err
	}
	if err := db.opts.FS.RemoveAll(scratch); err != nil {
		return fmt.Errorf("drop table %s.%s: remove files: %w", dbName, name, err)
	}
	return db.opts.FS.SyncDir(dbDir)
}

// Table returns the open table dbName.name, opening it on first use. A
// missing table is an ErrNotFound error naming it.
func (db *DB) Table(dbName, name string) (*Table, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	return db.tableLocked(dbName, name)
}

func (db *DB) tableLocked(dbName, name string) (*Table, error) {
	k := tableKey(dbName, name)
	if t, ok := db.mu.tables[k]; ok {
		return t, nil
	}
	if err := db.requireDatabaseLocked(dbName); err != nil {
		return nil, err
	}
	notFound := rowttl.Errorf(rowttl.ErrNotFound, "Unknown table '%s.%s'", dbName, name)
	if ValidateName("table", name) != nil {
		return nil, notFound
	}
	path := filepath.Join(db.dir, dbName, name)
	ok, err := db.exists(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound
	}
	t, err := Open(path, &db.opts)
	if err != nil {
		if errors.Is(err, rowttl.ErrNotFound) {
			return nil, fmt.Errorf("%w (%v)", notFound, err)
		}
		return nil, fmt.Errorf("open table %s.%s: %w", dbName, name, err)
	}
	t.name = dbName + "." + name
	db.mu.tables[k] = t
	return t, nil
}

// Tables returns the table names of a database, sorted.
func (db *DB) Tables(dbName string) ([]string, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	if err := db.requireDatabaseLocked(dbName); err != nil {
		return nil, err
	}
	names, err := db.listDirs(filepath.Join(db.dir, dbName))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// Close closes every open table and releases the directory. Tables
// returned earlier fail with ErrClosed afterwards.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.mu.closed {
		return nil
	}
	db.mu.closed = true
	var first error
	for k, t := range db.mu.tables {
		if err := t.Close(); err != nil && first == nil {
			first = err
		}
		delete(db.mu.tables, k)
	}
	db.lock.release()
	return first
}
