import Foundation
internal import ServerTrust
internal import ServerTrustTestSupport

/// What one run of the `servertrust` binary produced.
struct CommandResult: CustomStringConvertible {
    let status: Int32
    let standardOutput: String
    let standardError: String

    var description: String { "exit \(status)\n--- stdout\n\(standardOutput)\n--- stderr\n\(standardError)" }
}

/// Runs the built `servertrust` binary with `posix_spawn`, reading standard output and
/// standard error through pipes until both close, then reaping the child.
///
/// Not `Foundation.Process`: its `waitUntilExit` has hung here. Both pipes are drained with
/// `poll` while the child runs, so a child that fills one pipe never deadlocks against a
/// parent waiting on the other; the pipes are close-on-exec, so a child spawned concurrently by
/// another test cannot hold them open.
enum CommandRunner {
    /// The `servertrust` binary SwiftPM built with the tests.
    static var binary: String { PackageFiles.servertrustBinary }

    /// Held while descriptors for a child are made and the child is spawned; counts the spawns
    /// (a `Locked` value must not be zero-sized).
    private static let spawnLock = Locked(0)

    /// Where standard output goes: a pipe, or a pseudo-terminal (so the child sees a TTY).
    enum OutputDevice {
        case pipe
        case terminal
    }

    /// Runs `servertrust arguments…` and waits for it, killing it after `timeout` seconds.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], standardOutput device: OutputDevice = .pipe,
        timeout: TimeInterval = 60
    ) -> CommandResult {
        var inherited = ProcessInfo.processInfo.environment
        inherited.removeValue(forKey: "NO_COLOR")
        let merged = inherited.merging(environment) { $1 }
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        let (outRead, errRead, pid, spawned) = spawnLock.withLock { spawns in
            spawns += 1
            let (outRead, outWrite) = device == .pipe ? makePipe() : makeTerminal()
            let (errRead, errWrite) = makePipe()
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, outWrite, 1)
            posix_spawn_file_actions_adddup2(&actions, errWrite, 2)
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, binary, &actions, nil, argv, envp)
            close(outWrite)
            close(errWrite)
            return (outRead, errRead, pid, spawned)
        }
        guard spawned == 0 else {
            close(outRead)
            close(errRead)
            return CommandResult(status: -1, standardOutput: "", standardError: "posix_spawn failed: \(spawned)")
        }
        let (out, err, timedOut) = drain(outRead, errRead, deadline: Date(timeIntervalSinceNow: timeout))
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exitStatus: Int32 = timedOut ? -2 : (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return CommandResult(
            status: exitStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self) + (timedOut ? "\n[killed after \(timeout) s]" : ""))
    }

    /// Glibc's `pipe2` is not visible to Swift: `pipe` then `FD_CLOEXEC`, under ``spawnLock`` so
    /// no child of this runner is spawned in between.
    private static func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe failed: \(errno)")
        fds.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// A pseudo-terminal pair: the child writes to the subsidiary side, we read the main side.
    /// `/dev/ptmx` with the Linux ioctls, as `posix_openpt`/`ptsname` are not visible to Swift.
    private static func makeTerminal() -> (read: Int32, write: Int32) {
        // TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned int): function-like
        // macros, which Swift does not import.
        let tiocsptlck: UInt = 0x4004_5431
        let tiocgptn: UInt = 0x8004_5430
        let main = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: Int32 = 0
        precondition(
            main >= 0 && ioctl(main, tiocsptlck, &unlock) == 0 && ioctl(main, tiocgptn, &number) == 0,
            "opening a pseudo-terminal failed: \(errno)")
        let name = "/dev/pts/\(number)"
        let subsidiary = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        precondition(subsidiary >= 0, "opening \(name) failed: \(errno)")
        // Raw output: no "\n" → "\r\n" translation, so the text reads as it was written.
        var settings = termios()
        tcgetattr(subsidiary, &settings)
        cfmakeraw(&settings)
        tcsetattr(subsidiary, TCSANOW, &settings)
        return (main, subsidiary)
    }

    /// Reads both descriptors until both report end of file (EIO for a terminal whose other
    /// side closed), or the deadline passes.
    private static func drain(_ first: Int32, _ second: Int32, deadline: Date) -> ([UInt8], [UInt8], Bool) {
        var buffers: [[UInt8]] = [[], []]
        var open = [true, true]
        let descriptors = [first, second]
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while open.contains(true) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                descriptors.forEach { close($0) }
                return (buffers[0], buffers[1], true)
            }
            var polls = descriptors.indices.filter { open[$0] }.map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polls, nfds_t(polls.count), Int32(min(remaining, 1) * 1000))
            if ready < 0 && errno != EINTR { break }
            for entry in polls where entry.revents != 0 {
                let index = descriptors.firstIndex(of: entry.fd)!
                let count = read(entry.fd, &chunk, chunk.count)
                if count > 0 {
                    buffers[index] += chunk[0..<count]
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open[index] = false
                }
            }
        }
        descriptors.forEach { close($0) }
        return (buffers[0], buffers[1], false)
    }
}
