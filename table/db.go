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
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/vfs"
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
//	<dir>/ROWTTL                    the marker: this is a data directory
//	<dir>/LOCK                      held while the DB is open
//	<dir>/<database>/               one directory per database
//	<dir>/<database>/<table>/       what Create makes
//
// A data directory never destroys what is not its own. OpenDB makes one
// only of a missing or empty directory (writing the marker) and refuses any
// other directory without the marker, except one made before the marker
// existed: a directory with the LOCK file every data directory had and a
// database directory holding a table whose manifest replays is adopted
// (the marker is written). A
// table is a directory holding CURRENT and the manifest it names; a
// database is the default one, an empty directory, or a directory holding
// at least one table. Nothing else is listed, opened or deleted: DROP
// TABLE removes the files a table is made of (segments, manifests,
// CURRENT, its lock files and temporary files), then the directory if
// nothing else is left in it; DROP DATABASE drops its tables so and removes
// the directory if it is then empty. Whatever a user put there stays where
// it was.
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
	// missing is set on a read-only DB whose directory does not exist: it
	// has the default database and no table.
	missing bool
	// initialized says what OpenDB made of the directory ("" when it was
	// a data directory already).
	initialized string

	mu struct {
		sync.Mutex
		// tables caches open tables by "db/name".
		tables map[string]*Table
		// seq numbers scratch directories.
		seq    uint64
		closed bool
		// pendingDrops wait for readers of other processes.
		pendingDrops []pendingDrop
	}
}

// OpenDB opens the data directory dir and its default database, and
// removes what a crash left in the middle of a CREATE or DROP. A missing
// or empty directory becomes a data directory, one made before data
// directories were marked is adopted (Initialized says which happened), and
// any other directory is refused with ErrInvalidArgument (see DB). Only one
// DB at a time may have a directory open for writing.
//
// With Options.ReadOnly, OpenDB takes no writer lock and changes nothing:
// it creates neither the directory nor the marker, a missing directory
// reads as an empty one, every DDL fails with ErrNotSupported and tables
// open read-only, alongside the process that owns the directory.
func OpenDB(dir string, opts *Options) (*DB, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	kind, err := classifyDataDir(o.FS, dir)
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, opts: o, lock: &fileLock{}}
	db.mu.tables = map[string]*Table{}
	if o.ReadOnly {
		db.missing = kind == dirMissing
		return db, nil
	}
	if err := o.FS.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	lock, err := lockDirFS(o.FS, dir, o.Holder)
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, rowttl.Errorf(ErrLocked, "data directory %s is in use by %s", dir, Holder(dir))
		}
		return nil, err
	}
	db.lock = lock
	switch kind {
	case dirMissing, dirEmpty:
		db.initialized = fmt.Sprintf("initialised %s as a new rowttl data directory", dir)
	case dirLegacy:
		db.initialized = fmt.Sprintf("adopted %s, a rowttl data directory made before data directories were marked", dir)
	}
	if kind != dirMarked {
		if err := vfs.WriteFileAtomic(o.FS, filepath.Join(dir, markerFile), []byte(markerText)); err != nil {
			lock.release()
			return nil, fmt.Errorf("mark data directory %s: %w", dir, err)
		}
		if err := o.FS.SyncDir(dir); err != nil {
			lock.release()
			return nil, err
		}
	}
	if err := db.createDatabaseDir(DefaultDatabase, true); err != nil {
		lock.release()
		return nil, err
	}
	if err := db.removeScratch(dir, true); err != nil {
		lock.release()
		return nil, err
	}
	dbs, err := db.listDatabases()
	if err != nil {
		lock.release()
		return nil, err
	}
	for _, name := range dbs {
		if err := db.removeScratch(filepath.Join(dir, name), false); err != nil {
			lock.release()
			return nil, err
		}
	}
	return db, nil
}

// Initialized says what OpenDB made of the directory: that it created a
// new data directory or adopted an unmarked one, or "" when the directory
// was a data directory already. The command line prints it.
func (db *DB) Initialized() string { return db.initialized }

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

// The marker of a data directory.
const (
	markerFile = "ROWTTL"
	markerText = "rowttl data directory\n"
)

// dirKind is what OpenDB finds at a data directory's path.
type dirKind int

const (
	dirMissing dirKind = iota
	dirEmpty           // nothing, or only a LOCK file and empty directories
	dirMarked          // holds the marker
	dirLegacy          // a data directory made before the marker existed
)

// classifyDataDir tells what dir is, or why it is not a data directory.
func classifyDataDir(fsys vfs.FS, dir string) (dirKind, error) {
	st, err := fsys.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dirMissing, nil
	}
	if err != nil {
		return 0, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s is not a rowttl data directory: it is not a directory", dir)
	}
	names, err := fsys.List(dir)
	if err != nil {
		return 0, fmt.Errorf("data directory %s: %w", dir, err)
	}
	for _, n := range names {
		if n == markerFile {
			return dirMarked, nil
		}
	}
	notOurs := func(what string) error {
		return rowttl.Errorf(rowttl.ErrInvalidArgument,
			"%s is not a rowttl data directory: it holds %s and no %s marker (a new data directory needs a missing or empty directory)",
			dir, what, markerFile)
	}
	empty, legacy, locked := true, false, false
	file := "" // a file not rowttl's, for the message
	for _, n := range names {
		// What cannot be read (a dangling link, a directory of someone
		// else's) is not rowttl's: it makes the directory no data
		// directory rather than an error of its own.
		p := filepath.Join(dir, n)
		st, err := fsys.Stat(p)
		if err != nil || !st.IsDir() {
			locked = locked || n == lockFile && err == nil
			if n != lockFile && file == "" {
				file = n
			}
			continue
		}
		sub, err := fsys.List(p)
		if err != nil {
			empty = false
			continue
		}
		if len(sub) > 0 {
			empty = false
		}
		if legacy || ValidateName("", n) != nil {
			continue
		}
		for _, tn := range sub {
			if ValidateName("", tn) == nil && tableReplays(fsys, filepath.Join(p, tn)) {
				legacy = true
				break
			}
		}
	}
	switch {
	case legacy && locked:
		// Every data directory an older OpenDB made has its LOCK file
		// (what "/" above a /tmp/t table has not). Files beside the
		// databases (the demo's plot) were allowed then.
		return dirLegacy, nil
	case file != "":
		return 0, notOurs("the file " + strconv.Quote(file))
	case legacy:
		return 0, notOurs("rowttl tables in subdirectories but never was a data directory (no LOCK file)")
	case empty:
		return dirEmpty, nil
	}
	return 0, notOurs("directories without rowttl tables")
}

// tableReplays reports whether dir holds a table whose manifest replays.
func tableReplays(fsys vfs.FS, dir string) bool {
	num, _, err := readCurrent(fsys, dir)
	if err != nil {
		return false
	}
	_, err = replayManifest(fsys, dir, num)
	return err == nil
}

// isTableDir reports whether dir is a table: a directory holding CURRENT
// and a manifest. (Whether they are sound is for Open and check to say.)
func isTableDir(fsys vfs.FS, dir string) bool {
	names, err := fsys.List(dir)
	if err != nil {
		return false
	}
	current, manifest := false, false
	for _, n := range names {
		switch {
		case n == currentFile:
			current = true
		case strings.HasPrefix(n, "MANIFEST-"):
			manifest = true
		}
	}
	return current && manifest
}

// IsTableDir reports whether dir holds a table of the operating system's
// file system (CURRENT and a manifest).
func IsTableDir(dir string) bool { return isTableDir(vfs.Default, dir) }

// ClassifyDataDir returns nil when dir (of the operating system's file
// system) is a data directory, missing or empty, and otherwise the error
// OpenDB would refuse it with.
func ClassifyDataDir(dir string) error {
	_, err := classifyDataDir(vfs.Default, dir)
	return err
}

// ownFile reports whether a file name is one rowttl makes in a table
// directory: what DROP may delete.
func ownFile(n string) bool {
	n = strings.TrimSuffix(n, ".tmp")
	if _, ok := rowset.ParseSegmentFileName(n); ok {
		return true
	}
	if _, ok := parseWALName(n); ok {
		return true
	}
	if rest, ok := strings.CutPrefix(n, "MANIFEST-"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
		return true
	}
	return n == currentFile || n == lockFile || n == readersFile
}

// isDatabaseDir reports whether name is a database: the default one, an
// empty directory, or one holding at least one table.
func (db *DB) isDatabaseDir(name string) (bool, error) {
	if db.missing {
		return name == DefaultDatabase, nil
	}
	path := filepath.Join(db.dir, name)
	st, err := db.opts.FS.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A read-only DB of an empty directory still has the default
		// database that a writer would make.
		return db.opts.ReadOnly && name == DefaultDatabase, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, nil
	}
	if name == DefaultDatabase {
		return true, nil
	}
	names, err := db.opts.FS.List(path)
	if err != nil {
		return false, err
	}
	other := false
	for _, n := range names {
		if strings.HasPrefix(n, creatingPrefix) || strings.HasPrefix(n, droppingPrefix) {
			continue
		}
		if ValidateName("", n) == nil && isTableDir(db.opts.FS, filepath.Join(path, n)) {
			return true, nil
		}
		other = true
	}
	return !other, nil
}

// listDatabases returns the databases, sorted.
func (db *DB) listDatabases() ([]string, error) {
	if db.missing {
		return []string{DefaultDatabase}, nil
	}
	names, err := db.opts.FS.List(db.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	seenDefault := false
	for _, n := range names {
		if ValidateName("", n) != nil {
			continue
		}
		ok, err := db.isDatabaseDir(n)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, n)
			seenDefault = seenDefault || n == DefaultDatabase
		}
	}
	if !seenDefault && db.opts.ReadOnly {
		out = append(out, DefaultDatabase)
		sort.Strings(out)
	}
	return out, nil
}

// listTables returns the tables of a database, sorted.
func (db *DB) listTables(dbName string) ([]string, error) {
	if db.missing {
		return nil, nil
	}
	dbDir := filepath.Join(db.dir, dbName)
	names, err := db.opts.FS.List(dbDir)
	if errors.Is(err, fs.ErrNotExist) && db.opts.ReadOnly {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if ValidateName("", n) == nil && isTableDir(db.opts.FS, filepath.Join(dbDir, n)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// dropTableFiles deletes the files rowttl made in the table directory dir,
// then dir if nothing is left in it. It deletes nothing and reports busy
// while a reader of another process holds the table's READERS lock, and
// reports foreign when files not rowttl's are left (dir stays then).
func (db *DB) dropTableFiles(dir string) (busy, foreign bool, err error) {
	busy, release := readersBusy(db.opts.FS, dir)
	if busy {
		return true, false, nil
	}
	defer release()
	names, err := db.opts.FS.List(dir)
	if err != nil {
		return false, false, err
	}
	for _, n := range names {
		if !ownFile(n) {
			foreign = true
			continue
		}
		if err := db.opts.FS.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, false, err
		}
	}
	if foreign {
		return false, true, nil
	}
	if err := db.opts.FS.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, false, err
	}
	return false, false, nil
}

// dropDatabaseFiles drops every table (and scratch table) of the database
// directory dir, then dir if nothing is left in it.
func (db *DB) dropDatabaseFiles(dir string) (busy, foreign bool, err error) {
	names, err := db.opts.FS.List(dir)
	if err != nil {
		return false, false, err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		scratch := strings.HasPrefix(n, creatingPrefix) || strings.HasPrefix(n, droppingPrefix)
		if !scratch && (ValidateName("", n) != nil || !isTableDir(db.opts.FS, p)) {
			foreign = true
			continue
		}
		b, f, err := db.dropTableFiles(p)
		if err != nil {
			return false, false, err
		}
		busy, foreign = busy || b, foreign || f
	}
	if busy || foreign {
		return busy, foreign, nil
	}
	if err := db.opts.FS.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, false, err
	}
	return false, false, nil
}

// finishDrop deletes what a DROP renamed to scratch (a table, or with
// database set a database) and puts what is not rowttl's back under its
// name, where it no longer makes a table. It returns false when a reader
// of another process keeps it from finishing: Close and the next OpenDB
// try again.
func (db *DB) finishDrop(scratch, name string, database bool) (bool, error) {
	var busy, foreign bool
	var err error
	if database {
		busy, foreign, err = db.dropDatabaseFiles(scratch)
	} else {
		busy, foreign, err = db.dropTableFiles(scratch)
	}
	if err != nil || busy {
		return false, err
	}
	if foreign {
		if taken, err := db.exists(name); err != nil || taken {
			return true, err
		}
		if err := db.opts.FS.Rename(scratch, name); err != nil {
			return false, err
		}
	}
	return true, db.opts.FS.SyncDir(filepath.Dir(name))
}

// removeScratch finishes what a crash left in the middle of a CREATE or
// DROP in dir: the data directory (root: scratch databases) or a database
// (scratch tables). Only rowttl's files are deleted.
func (db *DB) removeScratch(dir string, root bool) error {
	names, err := db.opts.FS.List(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		prefix := ""
		switch {
		case strings.HasPrefix(n, creatingPrefix):
			prefix = creatingPrefix
		case strings.HasPrefix(n, droppingPrefix):
			prefix = droppingPrefix
		default:
			continue
		}
		// .dropping-<name>-<seq>: what is not rowttl's goes back to <name>.
		orig := strings.TrimPrefix(n, prefix)
		if i := strings.LastIndexByte(orig, '-'); i > 0 {
			orig = orig[:i]
		}
		if _, err := db.finishDrop(filepath.Join(dir, n), filepath.Join(dir, orig), root); err != nil {
			return fmt.Errorf("remove leftover %s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

// retryDropsLocked finishes the drops that readers of other processes held
// up.
func (db *DB) retryDropsLocked() error {
	var first error
	kept := db.mu.pendingDrops[:0]
	for _, d := range db.mu.pendingDrops {
		done, err := db.finishDrop(d.scratch, d.name, d.database)
		if err != nil && first == nil {
			first = err
		}
		if !done && err == nil {
			kept = append(kept, d)
		}
	}
	db.mu.pendingDrops = kept
	return first
}

// pendingDrop is a dropped table or database whose files wait for readers.
type pendingDrop struct {
	scratch, name string
	database      bool
}

func (db *DB) checkWritableLocked(what string) error {
	if db.opts.ReadOnly {
		return rowttl.Errorf(rowttl.ErrNotSupported, "%s: data directory %s is open read-only", what, db.dir)
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
		isDB, err := db.isDatabaseDir(name)
		if err != nil {
			return err
		}
		if !isDB {
			return rowttl.Errorf(rowttl.ErrExists, "Can't create database '%s'; %s exists and is not a database", name, path)
		}
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
	if err := db.checkWritableLocked("create database " + name); err != nil {
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
	return db.isDatabaseDir(name)
}

func (db *DB) requireDatabaseLocked(name string) error {
	if err := ValidateName("database", name); err != nil {
		return err
	}
	ok, err := db.isDatabaseDir(name)
	if err != nil {
		return err
	}
	if !ok {
		return rowttl.Errorf(rowttl.ErrNotFound, "Unknown database '%s'", name)
	}
	return nil
}

// DropDatabase closes and drops a database: every table in it, then its
// directory if nothing else is left in it. Without ifExists a missing
// database is an ErrNotFound error.
func (db *DB) DropDatabase(name string, ifExists bool) error {
	if err := ValidateName("database", name); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return err
	}
	if err := db.checkWritableLocked("drop database " + name); err != nil {
		return err
	}
	ok, err := db.isDatabaseDir(name)
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
	path := filepath.Join(db.dir, name)
	db.mu.seq++
	scratch := filepath.Join(db.dir, droppingPrefix+name+"-"+strconv.FormatUint(db.mu.seq, 10))
	if err := db.opts.FS.Rename(path, scratch); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	if err := db.opts.FS.SyncDir(db.dir); err != nil {
		return err
	}
	done, err := db.finishDrop(scratch, path, true)
	if err != nil {
		return fmt.Errorf("drop database %s: remove files: %w", name, err)
	}
	if !done {
		db.mu.pendingDrops = append(db.mu.pendingDrops, pendingDrop{scratch: scratch, name: path, database: true})
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
	return db.listDatabases()
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
	if err := db.checkWritableLocked("create table " + dbName + "." + name); err != nil {
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
		if !isTableDir(db.opts.FS, path) {
			return nil, rowttl.Errorf(rowttl.ErrExists, "Can't create table '%s.%s': %s exists and is not a table", dbName, name, path)
		}
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
		db.dropTableFiles(scratch)
		return nil, err
	}
	if err := t.Close(); err != nil {
		db.dropTableFiles(scratch)
		return nil, err
	}
	if err := db.opts.FS.Rename(scratch, path); err != nil {
		db.dropTableFiles(scratch)
		return nil, fmt.Errorf("create table %s.%s: %w", dbName, name, err)
	}
	if err := db.opts.FS.SyncDir(dbDir); err != nil {
		return nil, err
	}
	return db.tableLocked(dbName, name)
}

// DropTable closes the table dbName.name and removes its files (then its
// directory, if nothing else is in it). Without ifExists a missing table
// is an ErrNotFound error. The name is gone durably when DropTable returns
// nil.
func (db *DB) DropTable(dbName, name string, ifExists bool) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return err
	}
	if err := db.checkWritableLocked("drop table " + dbName + "." + name); err != nil {
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
	if !isTableDir(db.opts.FS, path) {
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
	done, err := db.finishDrop(scratch, path, false)
	if err != nil {
		return fmt.Errorf("drop table %s.%s: remove files: %w", dbName, name, err)
	}
	if !done {
		db.mu.pendingDrops = append(db.mu.pendingDrops, pendingDrop{scratch: scratch, name: path})
	}
	return db.retryDropsLocked()
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
	if db.missing || ValidateName("table", name) != nil {
		return nil, notFound
	}
	path := filepath.Join(db.dir, dbName, name)
	if !isTableDir(db.opts.FS, path) {
		return nil, notFound
	}
	t, err := Open(path, &db.opts)
	if err != nil {
		if errors.Is(err, rowttl.ErrNotFound) {
			return nil, fmt.Errorf("%w (%w)", notFound, err)
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
	names, err := db.listTables(dbName)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// Close closes every open table, finishes the drops readers held up if
// they have gone (the next OpenDB does otherwise), and releases the
// directory. Tables returned earlier fail with ErrClosed afterwards.
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
	if err := db.retryDropsLocked(); err != nil && first == nil {
		first = err
	}
	db.lock.release()
	return first
}
