using System.Text.Json;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// One kind of item in a <see cref="SmugglerResult"/> (RavenDB's <c>Counts</c> and its
/// <c>LastEtag</c>, <c>SkippedCount</c> and <c>Attachments</c> variants; this one class writes
/// whichever members its kind has). Written by the one thread that runs the export or import,
/// read at any moment by <c>operations/state</c>: every field is read and written atomically.
/// </summary>
public sealed class SmugglerCounts
{
    private readonly SmugglerResult _owner;
    private readonly bool _lastEtag;
    private readonly bool _skippedCount;
    private long _read;
    private long _errored;
    private long _skipped;
    private long _bytes;
    private long _etag;
    private long _startTicks;
    private int _processed;
    private int _wasSkipped;

    internal SmugglerCounts(SmugglerResult owner, bool lastEtag = false, bool skippedCount = false, bool attachments = false)
    {
        _owner = owner;
        _lastEtag = lastEtag;
        _skippedCount = skippedCount;
        if (attachments)
        {
            Attachments = new SmugglerCounts(owner);
        }
    }

    public long ReadCount => Volatile.Read(ref _read);

    public long ErroredCount => Volatile.Read(ref _errored);

    /// <summary>Items read but left out on purpose (a collection or expiry filter, an auto index).</summary>
    public long SkippedCount => Volatile.Read(ref _skipped);

    public long SizeInBytes => Volatile.Read(ref _bytes);

    /// <summary>The etag of the last item of this kind exported (0 on import and for kinds without etags).</summary>
    public long LastEtag => Volatile.Read(ref _etag);

    /// <summary>Whether this kind was worked on, and whether it was skipped as a whole (not asked for, or not Jackdaw's).</summary>
    public bool Processed => Volatile.Read(ref _processed) != 0;

    public bool Skipped => Volatile.Read(ref _wasSkipped) != 0;

    /// <summary>The attachment contents written or read with this kind's items (each distinct content once per dump).</summary>
    public SmugglerCounts? Attachments { get; }

    internal void Start()
    {
        Interlocked.CompareExchange(ref _startTicks, DateTime.UtcNow.Ticks, 0);
        _owner.Changed();
    }

    internal void Read(long bytes = 0)
    {
        Interlocked.Increment(ref _read);
        if (bytes != 0)
        {
            Interlocked.Add(ref _bytes, bytes);
        }
        _owner.Changed();
    }

    internal void Errored()
    {
        Interlocked.Increment(ref _errored);
        _owner.Changed();
    }

    internal void SkippedOne()
    {
        Interlocked.Increment(ref _skipped);
        _owner.Changed();
    }

    internal void Etag(long etag)
    {
        if (etag > Volatile.Read(ref _etag))
        {
            Volatile.Write(ref _etag, etag);
        }
    }

    /// <summary>Done: processed, and skipped when it was not asked for (or is not Jackdaw's); its attachments' counts too.</summary>
    internal void Finish(bool skipped, bool? attachmentsSkipped = null)
    {
        Volatile.Write(ref _processed, 1);
        Volatile.Write(ref _wasSkipped, skipped ? 1 : 0);
        Attachments?.Finish(attachmentsSkipped ?? skipped);
        _owner.Changed();
    }

    internal void Write(Utf8JsonWriter writer, string name)
    {
        writer.WriteStartObject(name);
        var start = Volatile.Read(ref _startTicks);
        JsonDefaults.WriteTime(writer, "StartTime", start == 0 ? null : new DateTime(start, DateTimeKind.Utc));
        writer.WriteBoolean("Processed", Processed);
        writer.WriteNumber("ReadCount", ReadCount);
        writer.WriteBoolean("Skipped", Skipped);
        writer.WriteNumber("ErroredCount", ErroredCount);
        writer.WriteNumber("SizeInBytes", SizeInBytes);
        if (_lastEtag)
        {
            writer.WriteNumber("LastEtag", LastEtag);
        }
        Attachments?.Write(writer, "Attachments");
        if (_skippedCount)
        {
            writer.WriteNumber("SkippedCount", SkippedCount);
        }
        writer.WriteEndObject();
    }
}
