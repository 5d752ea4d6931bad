; The Windows installer (scripts/package-windows runs makensis on it): per user, no administrator.
; It puts the tray (lembas-desktop.exe, which runs the device), the headless lembas.exe, the icon,
; the license and the third-party notices in %LOCALAPPDATA%\Programs\LLeMbas; a Start menu folder
; (LLeMbas Desktop, and the uninstaller); the app's id for toasts; and the entry Windows lists under
; installed apps. The window (lembas-window.exe) is not in it: it does not cross-build yet
; (docs/windows.md). The uninstaller removes both start-at-login entries first (lembas service
; uninstall, and the tray's), then what was installed; the person's config and state stay
; (%APPDATA%\lembas, %LOCALAPPDATA%\lembas), as a Debian remove keeps a home's files.
;
; Defined by the script: VERSION (2.0.0), STAGE (the folder holding lembas.exe,
; lembas-desktop.exe, lembas.ico, LICENSE.txt and THIRD-PARTY-NOTICES.txt), OUT (the installer's
; path); FAST for zlib instead of lzma (the tests' installer).

; A 64-bit installer for a 64-bit program (and Wine's wine64 runs no 32-bit one).
Target amd64-unicode
ManifestDPIAware true
!ifdef FAST
  SetCompressor zlib
!else
  SetCompressor /SOLID lzma
!endif

!include "MUI2.nsh"
!include "FileFunc.nsh"

!define NAME "LLeMbas"
!define PUBLISHER "The LLeMbas Desktop authors"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\LLeMbas"
; The tray's toasts are shown under this id (crates/tray/src/notifier/toast.rs).
!define APP_ID "LLeMbas.Desktop"
!define APP_ID_KEY "Software\Classes\AppUserModelId\LLeMbas.Desktop"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"

Name "${NAME}"
OutFile "${OUT}"
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\LLeMbas"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${NAME} ${VERSION}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${NAME}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "FileDescription" "${NAME} ${VERSION} setup"
VIAddVersionKey "LegalCopyright" "2026, ${PUBLISHER}"

!define MUI_ICON "${STAGE}\lembas.ico"
!define MUI_UNICON "${STAGE}\lembas.ico"
!define MUI_ABORTWARNING
!insertmacro MUI_PAGE_LICENSE "${STAGE}\LICENSE.txt"
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "LLeMbas" Main
  SectionIn RO
  SetOutPath "$INSTDIR"
  File "${STAGE}\lembas-desktop.exe"
  File "${STAGE}\lembas.exe"
  File "${STAGE}\lembas.ico"
  File "${STAGE}\LICENSE.txt"
  File "${STAGE}\THIRD-PARTY-NOTICES.txt"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateDirectory "$SMPROGRAMS\${NAME}"
  CreateShortcut "$SMPROGRAMS\${NAME}\LLeMbas Desktop.lnk" "$INSTDIR\lembas-desktop.exe" "" \
    "$INSTDIR\lembas.ico" 0 SW_SHOWNORMAL "" "Let your LLeMbas use this computer, within the limits you set"
  CreateShortcut "$SMPROGRAMS\${NAME}\Uninstall LLeMbas.lnk" "$INSTDIR\uninstall.exe"

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${APP_ID_KEY}" "DisplayName" "LLeMbas Desktop"
  WriteRegStr HKCU "${APP_ID_KEY}" "IconUri" "$INSTDIR\lembas.ico"

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\lembas.ico"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0
SectionEnd

Section "Uninstall"
  ; The start-at-login entry names this lembas.exe: removed while it is still there to say so
  ; (with no console window; none installed is no failure).
  nsExec::Exec '"$INSTDIR\lembas.exe" service uninstall'
  Pop $0
  ; The tray's own Start at login (auto-launch's value and the one Windows keeps beside it).
  DeleteRegValue HKCU "${RUN_KEY}" "LLeMbas Desktop"
  DeleteRegValue HKCU "Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run" "LLeMbas Desktop"
  Delete "$INSTDIR\lembas-desktop.exe"
  Delete "$INSTDIR\lembas.exe"
  Delete "$INSTDIR\lembas.ico"
  Delete "$INSTDIR\LICENSE.txt"
  Delete "$INSTDIR\THIRD-PARTY-NOTICES.txt"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\${NAME}\LLeMbas Desktop.lnk"
  Delete "$SMPROGRAMS\${NAME}\Uninstall LLeMbas.lnk"
  RMDir "$SMPROGRAMS\${NAME}"
  DeleteRegKey HKCU "${APP_ID_KEY}"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
SectionEnd
