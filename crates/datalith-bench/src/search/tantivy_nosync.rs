//! tantivy's `MmapDirectory` without its flushes, for the not-durable indexing run: tantivy
//! has no setting for it, so this directory writes new files and `meta.json` as the mmap one
//! does but never calls `fsync` (files are written, closed and renamed in place; the page
//! cache reaches the disk whenever the kernel likes). Reads, deletes, locks and watches go to
//! the `MmapDirectory` underneath.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, FileHandle, MmapDirectory, TerminatingWrite, WatchCallback,
    WatchHandle, WritePtr,
};

#[derive(Debug, Clone)]
pub struct NoSyncDirectory {
    root: PathBuf,
    inner: MmapDirectory,
}

impl NoSyncDirectory {
    pub fn open(root: &Path) -> tantivy::Result<NoSyncDirectory> {
        Ok(NoSyncDirectory {
            root: root.to_path_buf(),
            inner: MmapDirectory::open(root)?,
        })
    }
}

/// A file written without a flush at its end.
struct Unsynced(File);

impl Write for Unsynced {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TerminatingWrite for Unsynced {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.0.flush()
    }
}

impl Directory for NoSyncDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        let full = self.root.join(path);
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&full)
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        Ok(BufWriter::new(Box::new(Unsynced(file))))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let full = self.root.join(path);
        let tmp = full.with_extension("nosync-tmp");
        std::fs::write(&tmp, data)?;
        std::fs::rename(&tmp, &full)
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}
