// A directory tree of its own in /tmp standing in for a part of sysfs (powercap,
// cpuidle), for the bench's readers: this machine exposes neither.
import Glibc

/// Makes a directory in /tmp named after `prefix` holding `files` (path → contents).
func fakeSysfsTree(_ prefix: String, _ files: [String: String]) -> String {
    var template = Array("/tmp/ringlet-\(prefix)-XXXXXX".utf8CString)
    let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    for (path, contents) in files {
        var directory = root
        for part in path.split(separator: "/").dropLast() {
            directory += "/" + part
            mkdir(directory, 0o755)
        }
        let file = fopen(root + "/" + path, "w")!
        fputs(contents, file)
        fclose(file)
    }
    return root
}

/// Removes a tree `fakeSysfsTree` made.
func removeFakeSysfsTree(_ root: String) {
    _ = system("rm -rf '\(root)'")
}
