// Latency groups and the statistics printed for them.
using System.Buffers.Text;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

internal sealed class Group
{
    public required string Name { get; init; }
    public required int Receivers { get; init; }
    public required long Expected { get; init; }
    public required long Missing { get; init; }
    public required int MaxMissingPerReceiver { get; init; }
    public required int ReceiversMissingSome { get; init; }
    public required long Duplicates { get; init; }
    public required long Unknown { get; init; }
    public required int Errors { get; init; }
    public required string[] Closed { get; init; }
    public required int[] LatencyUs { get; init; }
    public required int Batches { get; init; }
    public required long Messages { get; init; }
    public required long AllReceived { get; init; }
    public required int[] AckUs { get; init; }

    public static Group Of(string name, Receiver[] receivers, Load load)
    {
        var latencies = new List<int>(load.Measured.Count * receivers.Length);
        long missing = 0;
        var maxMissing = 0;
        var missingSome = 0;
        foreach (var receiver in receivers)
        {
            var own = 0;
            foreach (var i in load.Measured)
            {
                var arrival = receiver.Arrival[i];
                if (arrival == 0)
                {
                    own++;
                }
                else
                {
                    latencies.Add(arrival - load.Answered[i]);
                }
            }
            missing += own;
            maxMissing = Math.Max(maxMissing, own);
            if (own > 0)
            {
                missingSome++;
            }
        }
        var sorted = latencies.ToArray();
        Array.Sort(sorted);
        return new Group
        {
            Name = name,
            Receivers = receivers.Length,
            Expected = (long)load.Measured.Count * receivers.Length,
            Missing = missing,
            MaxMissingPerReceiver = maxMissing,
            ReceiversMissingSome = missingSome,
            Duplicates = receivers.Sum(r => (long)r.Duplicates),
            Unknown = receivers.Sum(r => (long)r.Unknown),
            Errors = receivers.Sum(r => r.Errors),
            Closed = receivers.Where(r => r.Closed is not null).Select(r => $"{r.Name}: {r.Closed}").Take(5).ToArray(),
            LatencyUs = sorted,
            Batches = receivers.Sum(r => r.Batches),
            Messages = receivers.Sum(r => (long)r.Messages),
            AllReceived = receivers.Sum(r => (long)r.Received),
            AckUs = receivers.SelectMany(r => r.AckUs).ToArray(),
        };
    }

    public Dictionary<string, object?> ToJson() => new()
    {
        ["name"] = Name,
        ["receivers"] = Receivers,
        ["expected"] = Expected,
        ["received"] = LatencyUs.Length,
        ["missing"] = Missing,
        ["maxMissingPerReceiver"] = MaxMissingPerReceiver,
        ["receiversMissingSome"] = ReceiversMissingSome,
        ["duplicates"] = Duplicates,
        ["unknown"] = Unknown,
        ["errors"] = Errors,
        ["closed"] = Closed,
        ["minMs"] = LatencyUs.Length == 0 ? null : LatencyUs[0] / 1000.0,
        ["p50Ms"] = Stats.SortedMs(LatencyUs, 0.50),
        ["p99Ms"] = Stats.SortedMs(LatencyUs, 0.99),
        ["p999Ms"] = Stats.SortedMs(LatencyUs, 0.999),
        ["maxMs"] = LatencyUs.Length == 0 ? null : LatencyUs[^1] / 1000.0,
        ["negative"] = LatencyUs.Count(l => l < 0),
        ["batches"] = Batches,
        ["messages"] = Messages,
        ["eventsPerMessage"] = Messages == 0 ? null : Math.Round((double)AllReceived / Messages, 1),
        ["ackP50Ms"] = Stats.Ms(AckUs, 0.50),
        ["ackP99Ms"] = Stats.Ms(AckUs, 0.99),
        ["ackMaxMs"] = Stats.Ms(AckUs, 1.0),
    };
}

internal static class Stats
{
    public static double? Ms(int[] values, double q)
    {
        var sorted = (int[])values.Clone();
        Array.Sort(sorted);
        return SortedMs(sorted, q);
    }

    public static double? SortedMs(int[] sorted, double q)
    {
        if (sorted.Length == 0)
        {
            return null;
        }
        var index = Math.Clamp((int)Math.Ceiling(q * sorted.Length) - 1, 0, sorted.Length - 1);
        return Math.Round(sorted[index] / 1000.0, 3);
    }
}

/// <summary>A Jackdaw changes-feed watcher: the WebSocket, one watch command, then DocumentChange arrays.</summary>
