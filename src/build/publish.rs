//! Crash-safe publishing of an index folder: a build writes into a staging folder under
//! `.cairn-lock` and renames its files into place, so the folder always holds a whole index.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{io, MODEL_DIR};
use crate::embed::{self, ModelFiles};
use crate::error::{Error, Result};
use crate::fragment;

/// Writes a file and flushes it to disk, readable by a web server.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file =
        std::fs::File::create(path).map_err(io(format!("cannot write {}", path.display())))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io(format!("cannot write {}", path.display())))?;
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    Ok(())
}

/// A folder inside the output folder where a build writes everything before `commit` renames
/// it into place. Dropped without a commit (an error), it is removed; a killed build's folder is
/// removed by the next build. A build holds `OUT/.cairn-lock` from start to end, so a second
/// build into the same folder at once is refused with a clear error instead of racing the first.
pub struct Staging {
    pub out: PathBuf,
    pub path: PathBuf,
    /// What the index in `out` owned before this build (`fragment::write::owned`), and the word
    /// rows its model named: all a build may remove.
    owned: fragment::write::Owned,
    model_packs: Vec<String>,
    _lock: std::fs::File,
}

const STAGING_PREFIX: &str = ".cairn-staging-";
const LOCK_FILE: &str = ".cairn-lock";

impl Staging {
    pub fn new(out: &Path) -> Result<Self> {
        let lock_path = out.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(format!("cannot create {}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(Error::InvalidInput(format!(
                "another cairn build is writing into {} now; wait for it to finish (the index there stays whole), then run this one again",
                out.display()
            ))),
            // WASI has no file locks: the npm package's launcher holds the folder instead
            // (`pkg/bin/cairn.mjs`).
            Err(std::fs::TryLockError::Error(e))
                if cfg!(target_os = "wasi") && e.kind() == std::io::ErrorKind::Unsupported => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io(format!("cannot lock {}", lock_path.display()))(e))
            }
        }
        // Under the lock, any staging folder is a killed build's: none is in use.
        for entry in std::fs::read_dir(out)?.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(STAGING_PREFIX)
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        // Under the lock, one name does (WASI has no process ids to tell builds apart).
        let path = out.join(format!("{STAGING_PREFIX}build"));
        std::fs::create_dir_all(&path).map_err(io(format!("cannot create {}", path.display())))?;
        let owned = fragment::write::owned(out);
        let model_packs = owned
            .web_weights
            .as_ref()
            .and_then(|file| std::fs::read(out.join(MODEL_DIR).join(file)).ok())
            .filter(|weights| embed::is_quantized(weights))
            .and_then(|weights| embed::word_packs(&weights).ok())
            .unwrap_or_default();
        Ok(Staging {
            out: out.to_path_buf(),
            path,
            owned,
            model_packs,
            _lock: lock,
        })
    }

    /// Renames the staged files into place, each an atomic replace: the model's files first
    /// (when they changed), then `file` (`index.cairn`, or a shard's `part.cairn`). At every
    /// moment the folder holds a whole index, old or new; between the two steps an old index
    /// whose model changed is refused by its model check, never read wrongly. Then removes what
    /// the old model owned and the new one does not; returns what the old index owned, for the
    /// caller to remove what the new one no longer names.
    pub fn commit(mut self, with_model: bool, file: &str) -> Result<fragment::write::Owned> {
        let (staged, live) = (self.path.join(MODEL_DIR), self.out.join(MODEL_DIR));
        let mut model = None;
        if with_model {
            std::fs::create_dir_all(&live)?;
            // The 8-bit model's word rows first: named by content, so a live one is never
            // replaced unless damaged, and all are in before the weights that name them.
            let packs = pack_names(&staged);
            let rows: Vec<(String, Vec<u8>)> = packs
                .iter()
                .map(|name| {
                    Ok((
                        name.clone(),
                        std::fs::read(staged.join(fragment::PACK_DIR).join(name))?,
                    ))
                })
                .collect::<Result<_>>()?;
            fragment::write::save_packs(&rows, &live).map_err(|e| {
                Error::Model(format!(
                    "cannot move the model into {}: {e}",
                    live.display()
                ))
            })?;
            let files: Vec<&str> = [
                ModelFiles::WEIGHTS,
                ModelFiles::QUANTIZED,
                ModelFiles::TOKENIZER,
                ModelFiles::CONFIG,
                ModelFiles::COMMON,
            ]
            .into_iter()
            .filter(|name| staged.join(name).exists())
            .collect();
            for name in &files {
                let new = std::fs::read(staged.join(name))?;
                if std::fs::read(live.join(name)).ok().as_deref() != Some(&new[..]) {
                    std::fs::rename(staged.join(name), live.join(name))
                        .map_err(io(format!("cannot move the model into {}", live.display())))?;
                }
            }
            model = Some((files, packs));
        }
        std::fs::rename(self.path.join(file), self.out.join(file)).map_err(io(format!(
            "cannot move {file} into {}",
            self.out.display()
        )))?;
        if let Ok(dir) = std::fs::File::open(&self.out) {
            let _ = dir.sync_all();
        }
        // What the old model had and the new one does not use: the weights file the old index
        // named, if the new model is another file; its word rows the new one does not name.
        if let Some((files, packs)) = model {
            if let Some(old) = &self.owned.web_weights {
                if !files.contains(&old.as_str())
                    && [ModelFiles::WEIGHTS, ModelFiles::QUANTIZED].contains(&old.as_str())
                {
                    let _ = std::fs::remove_file(live.join(old));
                }
                // The old 8-bit model's common rows, when the new model has none.
                if old == ModelFiles::QUANTIZED && !files.contains(&ModelFiles::COMMON) {
                    let _ = std::fs::remove_file(live.join(ModelFiles::COMMON));
                }
            }
            let owned = self.model_packs.iter().cloned().collect();
            fragment::write::remove_owned(&live, &owned, packs.iter().map(String::as_str))?;
        }
        Ok(std::mem::take(&mut self.owned))
    }
}

/// The names of the files in `dir/p/` (none when it has no such folder).
fn pack_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join(fragment::PACK_DIR))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
