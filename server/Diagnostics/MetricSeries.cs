namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// One series of a <see cref="MetricFamily"/>: its labels, rendered once, and its value, updated
/// with interlocked operations by every thread that records (no lock, no allocation).
/// </summary>
internal sealed class MetricSeries(string labels, int buckets)
{
    private long _whole;
    private long _fractionBits;
    private long _count;
    private long _sumBits;

    /// <summary><c>name="value",...</c> in label-name order, without braces; empty for none.</summary>
    public string Labels { get; } = labels;

    /// <summary>A histogram's counts per bucket (not cumulative), the last one for +Inf; null otherwise.</summary>
    public long[]? Buckets { get; } = buckets > 0 ? new long[buckets] : null;

    /// <summary>The collection of observable instruments this series was last reported in.</summary>
    public long Generation { get; set; }

    /// <summary>A counter's or gauge's value.</summary>
    public double Value => Volatile.Read(ref _whole) + BitConverter.Int64BitsToDouble(Volatile.Read(ref _fractionBits));

    public long Count => Volatile.Read(ref _count);

    public double Sum => BitConverter.Int64BitsToDouble(Volatile.Read(ref _sumBits));

    public void Add(long delta) => Interlocked.Add(ref _whole, delta);

    public void Add(double delta) => AddDouble(ref _fractionBits, delta);

    /// <summary>Starts an observable instrument's value over (each collection reports it whole).</summary>
    public void Reset()
    {
        Volatile.Write(ref _whole, 0);
        Volatile.Write(ref _fractionBits, 0);
    }

    public void Observe(int bucket, double value)
    {
        Interlocked.Increment(ref Buckets![bucket]);
        Interlocked.Increment(ref _count);
        AddDouble(ref _sumBits, value);
    }

    private static void AddDouble(ref long bits, double delta)
    {
        var current = Volatile.Read(ref bits);
        while (true)
        {
            var next = BitConverter.DoubleToInt64Bits(BitConverter.Int64BitsToDouble(current) + delta);
            var seen = Interlocked.CompareExchange(ref bits, next, current);
            if (seen == current)
            {
                return;
            }
            current = seen;
        }
    }
}
