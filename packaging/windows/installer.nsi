; The Windows installer (scripts/package-windows runs makensis on it): per user, no administrator.
; It puts the tray (lembas-desktop.exe, which runs the device), the window (lembas-window.exe, with
; the WebView2Loader.dll it loads), the headless lembas.exe, the icon, the license and the
; third-party notices in %LOCALAPPDATA%\Programs\LLeMbas; that folder on the account's Path, so
; `lembas` runs by name in a new terminal; a Start menu folder (LLeMbas Desktop, and the
; uninstaller); the app's id for toasts; and the entry Windows lists under installed apps. The
; uninstaller removes both start-at-login entries first (lembas service uninstall, and the tray's),
; then what was installed and the folder from the Path; the person's config and state stay
; (%APPDATA%\lembas, %LOCALAPPDATA%\lembas), as a Debian remove keeps a home's files.
;
; Defined by the script: VERSION (2.0.0), STAGE (the folder holding the three programs,
; WebView2Loader.dll, lembas.ico, LICENSE.txt and THIRD-PARTY-NOTICES.txt), OUT (the installer's
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
!include "LogicLib.nsh"
!include "StrFunc.nsh"
!include "WinMessages.nsh"
${StrStr}
${UnStrRep}

!define NAME "LLeMbas"
!define PUBLISHER "The LLeMbas Desktop authors"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\LLeMbas"
; The tray's toasts are shown under this id (crates/tray/src/notifier/toast.rs).
!define APP_ID "LLeMbas.Desktop"
!define APP_ID_KEY "Software\Classes\AppUserModelId\LLeMbas.Desktop"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
; Where the WebView2 Runtime says it is installed, for the machine or for this account.
!define WEBVIEW2_MACHINE "SOFTWARE\WOW6432Node\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define WEBVIEW2_ACCOUNT "Software\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"

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

; The longest Path written or taken as read whole: one under NSIS's string length, so a value
; that filled the buffer is taken as cut.
!define PATH_LIMIT 1000

; The account's Path into $0, and in $1 whether it was read: "ok", "none" (the account has no
; Path of its own) or "unreadable" (longer than NSIS's strings, or not a string). A Path that was
; not read whole is never written: a truncated Path would lose the person's entries. Uses $2, $3.
!macro READ_ACCOUNT_PATH
  ClearErrors
  ReadRegStr $0 HKCU "Environment" "Path"
  ${If} ${Errors}
    StrCpy $1 "none"
    StrCpy $2 0
    ${Do}
      ClearErrors
      EnumRegValue $3 HKCU "Environment" $2
      ${If} ${Errors}
      ${OrIf} $3 == ""
        ${ExitDo}
      ${EndIf}
      ${If} $3 == "Path"
        StrCpy $1 "unreadable"
        ${ExitDo}
      ${EndIf}
      IntOp $2 $2 + 1
    ${Loop}
  ${Else}
    StrCpy $1 "ok"
    StrLen $2 $0
    ${If} $2 >= ${PATH_LIMIT}
      StrCpy $1 "unreadable"
    ${EndIf}
  ${EndIf}
!macroend

; New terminals and Explorer take the changed Path without a new logon.
!macro PATH_CHANGED
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
!macroend

Section "LLeMbas" Main
  SectionIn RO
  SetOutPath "$INSTDIR"
  File "${STAGE}\lembas-desktop.exe"
  File "${STAGE}\lembas-window.exe"
  File "${STAGE}\WebView2Loader.dll"
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

  ; The install folder on the account's Path, once, after what is there (REG_EXPAND_SZ, as
  ; Windows keeps it, so entries like %USERPROFILE%\bin stay unexpanded).
  !insertmacro READ_ACCOUNT_PATH
  ${If} $1 == "none"
    WriteRegExpandStr HKCU "Environment" "Path" "$INSTDIR"
    !insertmacro PATH_CHANGED
  ${ElseIf} $1 == "ok"
    ${StrStr} $2 ";$0;" ";$INSTDIR;"
    ${If} $2 == ""
      StrCpy $3 $0 1 -1
      ${If} $0 == ""
      ${OrIf} $3 == ";"
        StrCpy $0 "$0$INSTDIR"
      ${Else}
        StrCpy $0 "$0;$INSTDIR"
      ${EndIf}
      StrLen $2 $0
      ${If} $2 < ${PATH_LIMIT}
        WriteRegExpandStr HKCU "Environment" "Path" $0
        !insertmacro PATH_CHANGED
      ${Else}
        StrCpy $1 "unreadable"
      ${EndIf}
    ${EndIf}
  ${EndIf}
  ${If} $1 == "unreadable"
    DetailPrint "Your Path is too long for this installer to change safely: add $INSTDIR to it to run lembas by name."
  ${EndIf}

  ; The window shows on Microsoft Edge WebView2, which Windows 11 has and Windows 10 mostly has.
  ReadRegStr $0 HKLM "${WEBVIEW2_MACHINE}" "pv"
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    ReadRegStr $0 HKCU "${WEBVIEW2_ACCOUNT}" "pv"
  ${EndIf}
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    DetailPrint "The Microsoft Edge WebView2 Runtime is not installed: LLeMbas's window needs it."
    IfSilent +2
      MessageBox MB_OK|MB_ICONINFORMATION "LLeMbas's window (sign-in, settings, approvals) needs the Microsoft Edge WebView2 Runtime, which this computer does not have. Install it from Microsoft's WebView2 page. Until then, approvals come as notifications and lembas works in a terminal."
  ${EndIf}
SectionEnd

Section "Uninstall"
  ; The start-at-login entry names this lembas.exe: removed while it is still there to say so
  ; (with no console window; none installed is no failure).
  nsExec::Exec '"$INSTDIR\lembas.exe" service uninstall'
  Pop $0
  ; The tray's own Start at login (auto-launch's value and the one Windows keeps beside it).
  DeleteRegValue HKCU "${RUN_KEY}" "LLeMbas Desktop"
  DeleteRegValue HKCU "Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run" "LLeMbas Desktop"
  ; The install folder off the account's Path, wherever it is in it; the rest of it as it was.
  !insertmacro READ_ACCOUNT_PATH
  ${If} $1 == "ok"
    StrCpy $2 ";$0;"
    ${Do}
      ${UnStrRep} $3 $2 ";$INSTDIR;" ";"
      StrLen $4 $3
      StrLen $5 $2
      ${If} $4 == $5
        ${ExitDo}
      ${EndIf}
      StrCpy $2 $3
    ${Loop}
    StrCpy $2 $2 "" 1
    StrCpy $2 $2 -1
    ${IfNot} $2 S== $0
      ${If} $2 == ""
        DeleteRegValue HKCU "Environment" "Path"
      ${Else}
        WriteRegExpandStr HKCU "Environment" "Path" $2
      ${EndIf}
      !insertmacro PATH_CHANGED
    ${EndIf}
  ${EndIf}
  Delete "$INSTDIR\lembas-desktop.exe"
  Delete "$INSTDIR\lembas-window.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
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
