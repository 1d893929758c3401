using System.Globalization;

/// <summary>
/// CPU time (user + system, seconds) of processes from /proc: one process by pid, or a process and
/// its children (a PostgreSQL postmaster and its backends, which live as long as the pooled
/// connections). Linux only; a pid of 0 reads as no time.
/// </summary>
internal static class ProcessCpu
{
    // /proc reports times in USER_HZ clock ticks, 100 per second on Linux.
    private const double TicksPerSecond = 100;

    public static double Self() => Seconds(Environment.ProcessId);

    public static double Seconds(int pid)
    {
        if (pid == 0)
        {
            return 0;
        }
        var fields = Fields(pid);
        return fields is null ? 0 : (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
    }

    public static double TreeSeconds(int rootPid)
    {
        if (rootPid == 0)
        {
            return 0;
        }
        var total = Seconds(rootPid);
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out var pid) || pid == rootPid)
            {
                continue;
            }
            var fields = Fields(pid);
            if (fields is not null && fields[1] == rootPid.ToString(CultureInfo.InvariantCulture))
            {
                total += (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
            }
        }
        return total;
    }

    // The fields after the command name (which may hold spaces): [0] state, [1] ppid, [11] utime, [12] stime.
    private static string[]? Fields(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        }
        catch (IOException)
        {
            return null; // the process ended
        }
    }
}
