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

// Run under Wine by scripts/test-windows (the device's unit tests cross-built), as nothing else
// here runs a command on Windows: the test program is its own command, a process that starts a
// second one and waits, so the tree has a grandchild the job must end too.
#[cfg(test)]
mod tests {
    use super::ProcessTree;
    use std::os::windows::io::AsRawHandle;
    use std::time::{Duration, Instant};
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0};
    use windows_sys::Win32::System::JobObjects::{
        JOBOBJECT_BASIC_PROCESS_ID_LIST, JobObjectBasicProcessIdList, QueryInformationJobObject,
    };
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject};

    const PARENT: &str = "process_tree::windows::tests::a_command_that_starts_another";
    const SLEEPER: &str = "process_tree::windows::tests::a_command_that_waits";

    /// This test program, running one of its own ignored tests as a command would run.
    fn this_program_running(test: &str) -> std::process::Command {
        let mut command =
            std::process::Command::new(std::env::current_exe().expect("the test program's path"));
        command.args(["--ignored", "--exact", "--test-threads=1", test]);
        command.stdout(std::process::Stdio::null());
        command
    }

    #[test]
    #[ignore = "a process of the command the tests below start"]
    fn a_command_that_starts_another() {
        let _grandchild = this_program_running(SLEEPER)
            .spawn()
            .expect("the second process starts");
        std::thread::sleep(Duration::from_secs(120));
    }

    #[test]
    #[ignore = "a process of the command the tests below start"]
    fn a_command_that_waits() {
        std::thread::sleep(Duration::from_secs(120));
    }

    /// The ids of the processes in the job now.
    fn processes_in(tree: &ProcessTree) -> Vec<usize> {
        #[repr(C)]
        struct List {
            head: JOBOBJECT_BASIC_PROCESS_ID_LIST,
            more: [usize; 15],
        }
        // SAFETY: a zeroed list is valid; the size given is the whole buffer's.
        let mut list: List = unsafe { std::mem::zeroed() };
        let asked = unsafe {
            QueryInformationJobObject(
                tree.job.as_raw_handle() as HANDLE,
                JobObjectBasicProcessIdList,
                (&raw mut list).cast(),
                size_of::<List>() as u32,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(
            asked,
            0,
            "the job's processes: {}",
            std::io::Error::last_os_error()
        );
        let count = list.head.NumberOfProcessIdsInList as usize;
        let ids = std::iter::once(list.head.ProcessIdList[0]).chain(list.more);
        ids.take(count).collect()
    }

    fn ended_within(pid: usize, limit: Duration) -> bool {
        // SAFETY: a process handle for waiting only, closed below; none means it is gone.
        let process = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid as u32) };
        if process.is_null() {
            return true;
        }
        let waited = unsafe { WaitForSingleObject(process, limit.as_millis() as u32) };
        unsafe { CloseHandle(process) };
        waited == WAIT_OBJECT_0
    }

    /// The command started in its tree, once both its processes are in the job.
    async fn a_command_of_two_processes() -> (tokio::process::Child, ProcessTree, Vec<usize>) {
        let mut command = tokio::process::Command::from(this_program_running(PARENT));
        ProcessTree::prepare(&mut command);
        let child = command.spawn().expect("the command starts");
        let tree = ProcessTree::of(&child).expect("the command is put in a job");
        let started = Instant::now();
        let mut pids = processes_in(&tree);
        while pids.len() < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the command never started its second process (the job holds {pids:?})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            pids = processes_in(&tree);
        }
        assert!(tree.alive());
        (child, tree, pids)
    }

    async fn ended(child: &mut tokio::process::Child, pids: &[usize]) -> std::process::ExitStatus {
        for pid in pids {
            assert!(
                ended_within(*pid, Duration::from_secs(10)),
                "process {pid} of the command outlived its stop"
            );
        }
        tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("the command's end is seen")
            .expect("its status")
    }

    #[tokio::test]
    async fn stopping_the_command_ends_every_process_it_started() {
        let (mut child, tree, pids) = a_command_of_two_processes().await;
        tree.kill();
        let status = ended(&mut child, &pids).await;
        assert_eq!(status.code(), Some(super::STOPPED as i32));
        assert!(!tree.alive());
    }

    #[tokio::test]
    async fn dropping_the_tree_ends_every_process_of_the_command() {
        let (mut child, tree, pids) = a_command_of_two_processes().await;
        drop(tree);
        ended(&mut child, &pids).await;
    }
}
