//! Linux: the seccomp filter under every command. It refuses (EPERM) what lets one process reach
//! into another or around the other walls: `ptrace`, `process_vm_readv`/`writev` (reading another
//! process's memory), `io_uring_*` (system calls the filter could not see), and the terminal
//! ioctls that type into the person's terminal (`TIOCSTI`) or drive the console (`TIOCLINUX`).
//! A system call of another architecture (x32, 32-bit) is refused whole: its numbers differ.
//!
//! The program is built in the parent and loaded by the child just before it runs the command.

use std::io;

/// `AUDIT_ARCH_*` of the architectures the device is built for.
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;
/// On x86_64 the x32 ABI's numbers carry this bit; they name the same calls by other numbers.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call's number, the architecture, the second argument's
/// low half (an ioctl's request).
const NR: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const ARG1_LOW: u32 = 24;

/// The calls refused whatever their arguments.
const REFUSED: [libc::c_long; 6] = [
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];
/// The ioctl requests refused.
const REFUSED_IOCTLS: [u32; 2] = [0x5412 /* TIOCSTI */, 0x541C /* TIOCLINUX */];

const ERRNO_EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

/// A filter ready to be loaded.
pub(super) struct Filter {
    program: Vec<libc::sock_filter>,
}

fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A conditional jump: `jt` instructions ahead when the test holds, `jf` when it does not.
fn jump(test: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | test | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn jump_if_equal(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    jump(libc::BPF_JEQ, k, jt, jf)
}

fn load(offset: u32) -> libc::sock_filter {
    statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

fn ret(value: u32) -> libc::sock_filter {
    statement(libc::BPF_RET | libc::BPF_K, value)
}

impl Filter {
    pub(super) fn new() -> Self {
        let mut program = vec![
            load(ARCH_OFFSET),
            jump_if_equal(ARCH, 1, 0),
            ret(ERRNO_EPERM),
            load(NR),
        ];
        #[cfg(target_arch = "x86_64")]
        program.extend([jump(libc::BPF_JGE, X32_BIT, 0, 1), ret(ERRNO_EPERM)]);
        for nr in REFUSED {
            program.push(jump_if_equal(nr as u32, 0, 1));
            program.push(ret(ERRNO_EPERM));
        }
        program.push(jump_if_equal(
            libc::SYS_ioctl as u32,
            0,
            2 * REFUSED_IOCTLS.len() as u8 + 1,
        ));
        program.push(load(ARG1_LOW));
        for request in REFUSED_IOCTLS {
            program.push(jump_if_equal(request, 0, 1));
            program.push(ret(ERRNO_EPERM));
        }
        program.push(ret(libc::SECCOMP_RET_ALLOW));
        Self { program }
    }

    /// Loads the filter into the calling thread. Runs between fork and exec: no allocation, and no
    /// new privileges must be set already.
    pub(super) fn load(&self) -> io::Result<()> {
        let program = libc::sock_fprog {
            len: self.program.len() as libc::c_ushort,
            filter: self.program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: the program outlives the call; the kernel copies it.
        let done = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &program as *const libc::sock_fprog,
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
