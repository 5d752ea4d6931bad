# LLeMbas shell integration for PowerShell, given as `-NoExit -EncodedCommand`: it runs after the
# user's profiles, and under any execution policy (a command, not a script file). It marks every
# prompt for the web terminal: OSC 133 A (prompt start), B (command start), C (output start),
# D;<status> (a command finished) and OSC 7 (the folder). The host name is filled in.

$Global:__LembasHost = @LEMBAS_HOST@
$Global:__LembasUserPrompt = $function:prompt
$Global:__LembasLastCommand = (Get-History -Count 1).Id

function Global:prompt {
    # First, before anything here changes them.
    $ok = $?
    $code = $Global:LASTEXITCODE
    $e = [char]27
    $bel = [char]7
    $marks = ''
    # A command line was run when the history grew: an empty line adds nothing to it.
    $last = (Get-History -Count 1).Id
    if ($null -ne $last -and $last -ne $Global:__LembasLastCommand) {
        $Global:__LembasLastCommand = $last
        $status = 0
        if (-not $ok) {
            $status = 1
            if ($code -is [int] -and $code -ne 0) { $status = $code }
        }
        $marks += "$e]133;D;$status$bel"
    }
    $location = $ExecutionContext.SessionState.Path.CurrentLocation
    if ($location.Provider.Name -eq 'FileSystem') {
        # C:\work is file://host/C%3A/work: each segment percent-encoded (RFC 3986's unreserved kept).
        $segments = ($location.ProviderPath -replace '\\', '/').Split('/') |
            ForEach-Object { [Uri]::EscapeDataString($_) }
        $marks += "$e]7;file://$Global:__LembasHost/" + ($segments -join '/') + $bel
    }
    $text = (& $Global:__LembasUserPrompt) -join ''
    $Global:LASTEXITCODE = $code
    "$marks$e]133;A$bel$text$e]133;B$bel"
}

# C when PSReadLine hands over a line that is not empty (it defines PSConsoleHostReadLine).
if (Test-Path Function:\PSConsoleHostReadLine) {
    $Global:__LembasReadLine = $function:PSConsoleHostReadLine
    function Global:PSConsoleHostReadLine {
        $line = & $Global:__LembasReadLine
        if ($line -and $line.Trim().Length -gt 0) {
            [Console]::Write("$([char]27)]133;C$([char]7)")
        }
        $line
    }
}
