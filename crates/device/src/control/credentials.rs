//! Who may use the control endpoint: the runtime's own user only. Pure functions, so the rules
//! are tested on tables; the endpoint feeds them the OS's answers (peer credentials, `stat`).

/// Whether a connection from `peer_uid` (the OS's peer credentials; `None` when it could not say)
/// is served by a runtime running as `own_uid`. Unknown credentials are refused, and so is root
/// when the runtime is not root's: answering approvals is the person's, not the machine's.
pub fn admit(peer_uid: Option<u32>, own_uid: u32) -> Result<(), Refused> {
    match peer_uid {
        Some(uid) if uid == own_uid => Ok(()),
        Some(peer) => Err(Refused::OtherUser { own: own_uid, peer }),
        None => Err(Refused::UnknownUser),
    }
}

/// Why a connection is not served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "This LLeMbas device runtime belongs to another user (uid {own}); a process of uid {peer} may not use it."
    )]
    OtherUser { own: u32, peer: u32 },
    #[error("The system did not say which user this connection is from, so it is refused.")]
    UnknownUser,
}

/// What to do with the socket's folder before serving in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    /// Ours and private (no group or other bits).
    Private,
    /// Ours but open to others: made 0700 first.
    Narrow,
    /// Another user's, or not a real folder (a symlink): not served in.
    Refuse,
}

/// Judges the folder from `lstat`: its owner, its mode bits and whether it is a real folder.
pub fn folder(owner: u32, mode: u32, is_dir: bool, own_uid: u32) -> Folder {
    if !is_dir || owner != own_uid {
        Folder::Refuse
    } else if mode & 0o077 != 0 {
        Folder::Narrow
    } else {
        Folder::Private
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_runtimes_own_user_is_served() {
        let cases = [
            (Some(1000), 1000, true),
            (Some(0), 0, true),
            (Some(1001), 1000, false),
            (Some(0), 1000, false),
            (Some(1000), 0, false),
            (None, 1000, false),
        ];
        for (peer, own, served) in cases {
            assert_eq!(admit(peer, own).is_ok(), served, "peer {peer:?}, own {own}");
        }
        let refused = admit(Some(1001), 1000).unwrap_err();
        assert_eq!(
            refused,
            Refused::OtherUser {
                own: 1000,
                peer: 1001
            }
        );
        assert!(refused.to_string().contains("another user"), "{refused}");
    }

    #[test]
    fn the_folder_is_ours_and_private() {
        let cases = [
            (1000, 0o700, true, Folder::Private),
            (1000, 0o500, true, Folder::Private),
            (1000, 0o755, true, Folder::Narrow),
            (1000, 0o701, true, Folder::Narrow),
            (1000, 0o1777, true, Folder::Narrow),
            (1001, 0o700, true, Folder::Refuse),
            (0, 0o700, true, Folder::Refuse),
            (1000, 0o700, false, Folder::Refuse),
        ];
        for (owner, mode, is_dir, want) in cases {
            assert_eq!(
                folder(owner, mode, is_dir, 1000),
                want,
                "owner {owner}, mode {mode:o}, dir {is_dir}"
            );
        }
    }
}
