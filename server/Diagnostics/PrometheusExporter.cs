using System.Diagnostics.Metrics;
using System.Text;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// Keeps what <c>GET /metrics</c> shows: a <see cref="MeterListener"/> over one server's
/// <see cref="ServerMetrics.Meter"/> (that instance only: several servers in one process each show
/// their own) and the runtime's <c>System.Runtime</c> meter (GC, thread pool; process-wide), its
/// measurements summed into <see cref="MetricFamily"/> series as they are recorded, observable
/// instruments read at each scrape. Written as Prometheus text format 0.0.4.
/// </summary>
public sealed class PrometheusExporter : IDisposable
{
    public const string RuntimeMeterName = "System.Runtime";

    private readonly MeterListener _listener = new();
    private readonly Meter _meter;
    private readonly List<MetricFamily> _families = [];
    private readonly Lock _scrape = new();
    private long _generation;

    private readonly int _maxSeries;

    /// <param name="maxSeries">The most label sets of one instrument (<see cref="MetricFamily.MaxSeries"/>).</param>
    public PrometheusExporter(Meter meter, int maxSeries = MetricFamily.DefaultMaxSeries)
    {
        _meter = meter;
        _maxSeries = maxSeries;
        _listener.InstrumentPublished = Publish;
        _listener.MeasurementsCompleted = static (_, _) => { };
        _listener.SetMeasurementEventCallback<long>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<int>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<short>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<byte>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<double>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<float>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<decimal>(static (instrument, value, tags, state) => ((MetricFamily)state!).Record((double)value, tags));
        _listener.Start();
    }

    private void Publish(Instrument instrument, MeterListener listener)
    {
        if (!ReferenceEquals(instrument.Meter, _meter) && instrument.Meter.Name != RuntimeMeterName)
        {
            return;
        }
        var family = new MetricFamily(instrument, ServerMetrics.BoundsOf(instrument), ReferenceEquals(instrument.Meter, _meter) ? _maxSeries : MetricFamily.DefaultMaxSeries);
        lock (_families)
            _families.Add(family);
        listener.EnableMeasurementEvents(instrument, family);
    }

    /// <summary>
    /// Reads the observable instruments (the gauges: sizes, counts, lags) and writes every series.
    /// One scrape at a time: the observable values of a scrape are its own.
    /// </summary>
    public string Scrape()
    {
        lock (_scrape)
        {
            MetricFamily[] families;
            lock (_families)
                families = [.. _families];
            _generation++;
            foreach (var family in families)
            {
                family.Generation = _generation;
            }
            _listener.RecordObservableInstruments();
            Array.Sort(families, static (a, b) => string.CompareOrdinal(a.Name, b.Name));
            var text = new StringBuilder(16 * 1024);
            foreach (var family in families)
            {
                family.WriteTo(text);
            }
            return text.ToString();
        }
    }

    /// <summary>Forgets the series of every instrument whose labels hold <paramref name="labels"/> (<see cref="MetricFamily.Forget"/>).</summary>
    internal void Forget(string labels)
    {
        MetricFamily[] families;
        lock (_families)
        {
            families = [.. _families];
        }
        foreach (var family in families)
        {
            family.Forget(labels);
        }
    }

    public void Dispose() => _listener.Dispose();
}
