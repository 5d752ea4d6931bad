/* bcryptprimitives.dll for Wine 8, which lacks it: Rust's std takes its random bytes from
 * ProcessPrng (Windows 10 and later). This one forwards to advapi32's RtlGenRandom. Built with
 * mingw by scripts/test-windows; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
