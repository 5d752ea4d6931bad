//! Windows: a Job Object per command, `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so closing it ends
//! every process in it. The command is spawned suspended and resumed once it is in the job: a
//! process it starts is then in the job too (jobs are inherited), with no moment outside it.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NO_WINDOW, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME, TerminateProcess,
};

/// The exit code every process of a stopped command gets. Windows has no polite stop for a
/// program without a window or console of ours: stopping is ending.
const STOPPED: u32 = 1;

/// The Job Object holding one command's processes. Closed on drop, which ends whatever is left in
/// it.
pub struct ProcessTree {
    job: OwnedHandle,
}

impl ProcessTree {
    /// Spawned suspended (resumed by [`Self::of`] once in the job), and with no console window.
    pub fn prepare(command: &mut tokio::process::Command) {
        command.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    }

    /// Puts the command just spawned (prepared with [`Self::prepare`]) in a new job and lets it
    /// run. When that fails the command is ended: it never ran outside a job.
    pub fn of(child: &tokio::process::Child) -> io::Result<Self> {
        let (Some(process), Some(pid)) = (child.raw_handle(), child.id()) else {
            return Err(io::Error::other("the command ended before it started"));
        };
        let made = Self::job_for(process).and_then(|tree| {
            resume_threads_of(pid)?;
            Ok(tree)
        });
        if made.is_err() {
            // SAFETY: the handle is the child's, open while `child` lives.
            unsafe { TerminateProcess(process as HANDLE, STOPPED) };
        }
        made.map_err(|e| io::Error::new(e.kind(), format!("the command could not be put in a job: {e}")))
    }

    fn job_for(process: RawHandle) -> io::Result<Self> {
        // SAFETY: no name, no security attributes: a new job of this process's.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just made and owned by nothing else.
        let job = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
        // SAFETY: a zeroed limit information is valid (all limits off).
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the size given is the structure's own.
        let set = unsafe {
            SetInformationJobObject(
                job.as_raw_handle() as HANDLE,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both handles are open.
        if unsafe { AssignProcessToJobObject(job.as_raw_handle() as HANDLE, process as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { job })
    }

    /// Ends every process of the command: there is no asking on Windows.
    pub fn ask_to_stop(&self) {
        self.kill();
    }

    /// Ends every process in the job.
    pub fn kill(&self) {
        // SAFETY: the job handle is open. A job already empty is not an error to us.
        unsafe { TerminateJobObject(self.job.as_raw_handle() as HANDLE, STOPPED) };
    }

    /// Whether any process is still in the job.
    pub fn alive(&self) -> bool {
        // SAFETY: a zeroed accounting record is valid; the size given is its own.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        let asked = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle() as HANDLE,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        // Not knowing is taken as alive: the caller then kills, which is safe.
        asked == 0 || info.ActiveProcesses > 0
    }

    /// Nothing to do: closing the job ends only what is still in it, which is what should end.
    pub fn disarm(&mut self) {}
}

/// Resumes the threads of a process spawned suspended (its first one).
fn resume_threads_of(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of every thread of the system; closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let mut resumed = 0;
    // SAFETY: the entry's size is set as the call requires.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    // SAFETY: the snapshot is open and the entry is ours.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: a thread id from the snapshot; the handle is closed at once.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: an open thread handle.
                if unsafe { ResumeThread(thread) } != u32::MAX {
                    resumed += 1;
                }
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: the snapshot's own handle.
    unsafe { CloseHandle(snapshot) };
    if resumed == 0 {
        return Err(io::Error::other("its first thread could not be resumed"));
    }
    Ok(())
}

/// No signals on Windows: a process always ends with a code.
pub fn signal_of(_status: std::process::ExitStatus) -> Option<i32> {
    None
}
