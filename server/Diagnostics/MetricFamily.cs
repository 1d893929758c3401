using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using System.Text;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// What the Prometheus exporter keeps of one instrument: its converted name, type and buckets, and
/// its series by label set.
/// <para>
/// A measurement finds its series by the identity of its tags' key and value objects: the server
/// records with tag arrays built once (per route, per database, per index) whose strings are always
/// the same instances, so the lookup hashes a few references and allocates nothing. A tag set seen
/// for the first time (or whose values are made afresh, as a boxed number is) goes the slow way, by
/// its rendered labels, under a lock; only string-valued sets join the fast map, which is bounded.
/// At most <see cref="MaxSeries"/> label sets per instrument are kept (at least
/// <see cref="DefaultMaxSeries"/>, more when the configured caps need it): measurements of more
/// are dropped and counted (<see cref="Dropped"/>), and the scrape says so in a comment. Label sets
/// that went away do not hold their place: an observable instrument's series not reported by a
/// collection are forgotten after it, and the series of a deleted database, index or subscription
/// are forgotten when it goes (<see cref="Forget"/>).
/// </para>
/// </summary>
internal sealed class MetricFamily
{
    public const int DefaultMaxSeries = 2000;
    private const int MaxFastEntries = 4096;

    private readonly ConcurrentDictionary<TagKey, MetricSeries> _byReference = new();
    private readonly Dictionary<string, MetricSeries> _byLabels = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();
    private long _dropped;

    public MetricFamily(Instrument instrument, double[]? bounds, int maxSeries = DefaultMaxSeries)
    {
        Instrument = instrument;
        MaxSeries = maxSeries;
        Kind = instrument switch
        {
            _ when IsHistogram(instrument) => MetricKind.Histogram,
            _ when IsCounter(instrument) => MetricKind.Counter,
            _ => MetricKind.Gauge,
        };
        Bounds = Kind == MetricKind.Histogram ? bounds ?? DefaultBounds : null;
        Name = PrometheusText.MetricName(instrument, Kind == MetricKind.Counter);
        IsObservable = instrument.IsObservable;
    }

    /// <summary>OpenTelemetry's default explicit bucket boundaries, for a histogram that advises none.</summary>
    public static readonly double[] DefaultBounds = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

    public Instrument Instrument { get; }

    /// <summary>The most label sets kept.</summary>
    public int MaxSeries { get; }

    public string Name { get; }

    public MetricKind Kind { get; }

    public double[]? Bounds { get; }

    public bool IsObservable { get; }

    /// <summary>The collection of observable instruments in progress: a series first reported in it starts over.</summary>
    public long Generation { get; set; }

    public long Dropped => Interlocked.Read(ref _dropped);

    public void Record(long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var series = Find(tags);
        if (series is null)
        {
            return;
        }
        if (Kind == MetricKind.Histogram)
        {
            series.Observe(Bucket(value), value);
        }
        else
        {
            series.Add(value);
        }
    }

    public void Record(double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var series = Find(tags);
        if (series is null)
        {
            return;
        }
        if (Kind == MetricKind.Histogram)
        {
            series.Observe(Bucket(value), value);
        }
        else
        {
            series.Add(value);
        }
    }

    private int Bucket(double value)
    {
        var bounds = Bounds!;
        var i = 0;
        while (i < bounds.Length && value > bounds[i])
        {
            i++;
        }
        return i;
    }

    private MetricSeries? Find(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (tags.Length <= TagKey.MaxTags && _byReference.TryGetValue(new TagKey(tags), out var known))
        {
            if (IsObservable && known.Generation != Generation)
            {
                StartOver(known);
            }
            return known;
        }
        return FindSlow(tags);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private MetricSeries? FindSlow(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var labels = Render(tags);
        MetricSeries? series;
        lock (_lock)
        {
            if (!_byLabels.TryGetValue(labels, out series))
            {
                if (_byLabels.Count >= MaxSeries)
                {
                    Interlocked.Increment(ref _dropped);
                    return null;
                }
                series = new MetricSeries(labels, Bounds is null ? 0 : Bounds.Length + 1);
                _byLabels.Add(labels, series);
            }
            if (IsObservable && series.Generation != Generation)
            {
                StartOver(series);
            }
        }
        if (tags.Length <= TagKey.MaxTags && AllStrings(tags) && _byReference.Count < MaxFastEntries)
        {
            _byReference.TryAdd(new TagKey(tags), series);
        }
        return series;
    }

    private void StartOver(MetricSeries series)
    {
        series.Reset();
        series.Generation = Generation;
    }

    private static bool AllStrings(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        foreach (var tag in tags)
        {
            if (tag.Value is not (string or null))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>The labels of <paramref name="tags"/>, sorted by name, as the exposition writes them.</summary>
    private static string Render(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (tags.IsEmpty)
        {
            return string.Empty;
        }
        var sorted = tags.ToArray();
        Array.Sort(sorted, static (a, b) => string.CompareOrdinal(a.Key, b.Key));
        var text = new StringBuilder();
        foreach (var (key, value) in sorted)
        {
            if (text.Length > 0)
            {
                text.Append(',');
            }
            text.Append(PrometheusText.LabelName(key)).Append('=');
            PrometheusText.AppendLabelValue(text, PrometheusText.ValueText(value));
        }
        return text.ToString();
    }

    /// <summary>
    /// Forgets every series whose labels hold <paramref name="labels"/> (rendered and adjacent, as
    /// <c>database="shop"</c> or <c>database="shop",index="Orders"</c>): its database, index or
    /// subscription is gone, and its place goes to the next one.
    /// </summary>
    public void Forget(string labels)
    {
        lock (_lock)
        {
            List<string>? gone = null;
            foreach (var key in _byLabels.Keys)
            {
                if (Holds(key, labels))
                {
                    (gone ??= []).Add(key);
                }
            }
            if (gone is not null)
            {
                Remove(gone);
            }
        }
    }

    private static bool Holds(string all, string labels)
    {
        var at = all.IndexOf(labels, StringComparison.Ordinal);
        while (at >= 0)
        {
            var end = at + labels.Length;
            if ((at == 0 || all[at - 1] == ',') && (end == all.Length || all[end] == ','))
            {
                return true;
            }
            at = all.IndexOf(labels, at + 1, StringComparison.Ordinal);
        }
        return false;
    }

    /// <summary>Removes <paramref name="labels"/>' series from both maps; under <see cref="_lock"/>.</summary>
    private void Remove(List<string> labels)
    {
        var removed = new HashSet<MetricSeries>(ReferenceEqualityComparer.Instance);
        foreach (var key in labels)
        {
            if (_byLabels.Remove(key, out var series))
            {
                removed.Add(series);
            }
        }
        foreach (var (key, series) in _byReference)
        {
            if (removed.Contains(series))
            {
                _byReference.TryRemove(key, out _);
            }
        }
    }

    /// <summary>The rendered form of one label, as <see cref="Forget"/> takes it.</summary>
    public static string Label(string name, string value)
    {
        var text = new StringBuilder();
        text.Append(PrometheusText.LabelName(name)).Append('=');
        PrometheusText.AppendLabelValue(text, value);
        return text.ToString();
    }

    /// <summary>Writes HELP, TYPE and every series (of an observable instrument, those of <paramref name="generation"/>); nothing when there is none.</summary>
    public void WriteTo(StringBuilder text)
    {
        MetricSeries[] series;
        lock (_lock)
        {
            if (IsObservable)
            {
                // Series this collection did not report (a database closed, an index deleted) give
                // their place back; one reported again later starts over.
                List<string>? stale = null;
                foreach (var (key, one) in _byLabels)
                {
                    if (one.Generation != Generation)
                    {
                        (stale ??= []).Add(key);
                    }
                }
                if (stale is not null)
                {
                    Remove(stale);
                }
            }
            series = [.. _byLabels.Values];
        }
        Array.Sort(series, static (a, b) => string.CompareOrdinal(a.Labels, b.Labels));
        var header = false;
        foreach (var one in series)
        {
            if (IsObservable && one.Generation != Generation)
            {
                continue;
            }
            if (!header)
            {
                header = true;
                var help = string.IsNullOrEmpty(Instrument.Description) ? Instrument.Name : Instrument.Description;
                text.Append("# HELP ").Append(Name).Append(' ').Append(PrometheusText.EscapeHelp(help)).Append('\n');
                text.Append("# TYPE ").Append(Name).Append(' ').Append(Kind switch
                {
                    MetricKind.Counter => "counter",
                    MetricKind.Histogram => "histogram",
                    _ => "gauge",
                }).Append('\n');
            }
            if (Kind == MetricKind.Histogram)
            {
                WriteHistogram(text, one);
            }
            else
            {
                Sample(text, Name, one.Labels, null, PrometheusText.Number(one.Value));
            }
        }
        if (Dropped > 0)
        {
            text.Append("# jackdaw: ").Append(Dropped).Append(" measurements of ").Append(Name).Append(" dropped: over ").Append(MaxSeries).Append(" label sets\n");
        }
    }

    private void WriteHistogram(StringBuilder text, MetricSeries series)
    {
        var bounds = Bounds!;
        var buckets = series.Buckets!;
        long cumulative = 0;
        for (var i = 0; i < buckets.Length; i++)
        {
            cumulative += Volatile.Read(ref buckets[i]);
            var le = i < bounds.Length ? PrometheusText.Number(bounds[i]) : "+Inf";
            Sample(text, Name + "_bucket", series.Labels, le, cumulative.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        Sample(text, Name + "_sum", series.Labels, null, PrometheusText.Number(series.Sum));
        // The +Inf bucket's count, not the separate counter: the two are updated one after the other.
        Sample(text, Name + "_count", series.Labels, null, cumulative.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    private static void Sample(StringBuilder text, string name, string labels, string? le, string value)
    {
        text.Append(name);
        if (labels.Length > 0 || le is not null)
        {
            text.Append('{').Append(labels);
            if (le is not null)
            {
                if (labels.Length > 0)
                {
                    text.Append(',');
                }
                text.Append("le=\"").Append(le).Append('"');
            }
            text.Append('}');
        }
        text.Append(' ').Append(value).Append('\n');
    }

    private static bool IsHistogram(Instrument instrument) =>
        instrument.GetType().IsGenericType && instrument.GetType().GetGenericTypeDefinition() == typeof(Histogram<>);

    private static bool IsCounter(Instrument instrument)
    {
        if (!instrument.GetType().IsGenericType)
        {
            return false;
        }
        var definition = instrument.GetType().GetGenericTypeDefinition();
        return definition == typeof(Counter<>) || definition == typeof(ObservableCounter<>);
    }

    /// <summary>Up to four tags, compared by the identity of their key and value objects.</summary>
    private readonly struct TagKey : IEquatable<TagKey>
    {
        public const int MaxTags = 4;

        private readonly object? _k0, _v0, _k1, _v1, _k2, _v2, _k3, _v3;
        private readonly int _count;

        public TagKey(ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            _count = tags.Length;
            if (tags.Length > 0)
            {
                (_k0, _v0) = (tags[0].Key, tags[0].Value);
            }
            if (tags.Length > 1)
            {
                (_k1, _v1) = (tags[1].Key, tags[1].Value);
            }
            if (tags.Length > 2)
            {
                (_k2, _v2) = (tags[2].Key, tags[2].Value);
            }
            if (tags.Length > 3)
            {
                (_k3, _v3) = (tags[3].Key, tags[3].Value);
            }
        }

        public bool Equals(TagKey other) =>
            _count == other._count
            && ReferenceEquals(_k0, other._k0) && ReferenceEquals(_v0, other._v0)
            && ReferenceEquals(_k1, other._k1) && ReferenceEquals(_v1, other._v1)
            && ReferenceEquals(_k2, other._k2) && ReferenceEquals(_v2, other._v2)
            && ReferenceEquals(_k3, other._k3) && ReferenceEquals(_v3, other._v3);

        public override bool Equals(object? obj) => obj is TagKey other && Equals(other);

        public override int GetHashCode() => HashCode.Combine(
            _count,
            RuntimeHelpers.GetHashCode(_v0),
            RuntimeHelpers.GetHashCode(_v1),
            RuntimeHelpers.GetHashCode(_v2),
            RuntimeHelpers.GetHashCode(_v3),
            RuntimeHelpers.GetHashCode(_k0));
    }
}

internal enum MetricKind
{
    Counter,
    Gauge,
    Histogram,
}
