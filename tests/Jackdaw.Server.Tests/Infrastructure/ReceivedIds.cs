namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>The file a subscription worker process (Jackdaw.Tests.SubscriptionWorker) writes: one id per line, written before its batch is acknowledged.</summary>
public static class ReceivedIds
{
    /// <summary>Every id in <paramref name="file"/>, with how often (none when it does not exist yet).</summary>
    public static Dictionary<string, int> Read(string file)
    {
        var counts = new Dictionary<string, int>(StringComparer.Ordinal);
        if (!File.Exists(file))
        {
            return counts;
        }
        using var stream = new FileStream(file, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using var reader = new StreamReader(stream);
        while (reader.ReadLine() is { } line)
        {
            // A worker killed in the middle of a write leaves a partial last line: its batch was never acknowledged.
            if (line.Length > 0)
            {
                counts[line] = counts.GetValueOrDefault(line) + 1;
            }
        }
        return counts;
    }
}
