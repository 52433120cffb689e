import CLibc

/// The command line as ckbrowse reads it.
enum Arguments {
    /// The arguments after the program name. Swift reads them from /proc/self/cmdline on Linux; where
    /// there is no /proc (a chroot, some containers) that is empty, so the C runtime's argv, saved at
    /// start, is used instead: `ckbrowse --version` works there too.
    static func current() -> [String] {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let count = Int(clibc_saved_argc())
        if arguments.isEmpty && count > 1 {
            arguments = (1..<count).compactMap { clibc_saved_argv(Int32($0)).map { String(cString: $0) } }
        }
        return arguments
    }

    /// The subcommands' names.
    static let subcommands: Set<String> = ["browse", "zones", "changes", "query", "get", "subscriptions", "apply", "serve", "bench"]
    /// Options shared by the subcommands that take a value (the flags among them take none).
    static let valueOptions: Set<String> = [
        "--profile", "--server", "--container", "--environment", "--database", "--api-token", "--web-auth-token", "--key-id", "--key-file",
        "--output",
    ]

    /// `ckbrowse --container X zones` as `ckbrowse zones --container X`: connection options may stand
    /// before the subcommand too. Only a leading run of options is moved, and only when a subcommand's
    /// name follows it; anything else is left as typed.
    static func normalized(_ arguments: [String]) -> [String] {
        var i = 0
        while i < arguments.count, arguments[i].hasPrefix("--"), arguments[i] != "--" {
            let option = arguments[i]
            if valueOptions.contains(option) { i += 2 } else { i += 1 }
        }
        guard i > 0, i < arguments.count, subcommands.contains(arguments[i]) else { return arguments }
        return [arguments[i]] + arguments[..<i] + arguments[(i + 1)...]
    }
}
