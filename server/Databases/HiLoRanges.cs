using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Databases;

/// <summary>A range of ids handed to a client's HiLo generator: it uses <see cref="Low"/>..<see cref="High"/>.</summary>
public readonly record struct HiLoRange(long Low, long High, long Size, DateTime At);

/// <summary>
/// HiLo id ranges, as RavenDB's clients ask for them (<c>/hilo/next</c>, <c>/hilo/return</c>):
/// per tag (a collection's id prefix, case-insensitive) the highest number handed out, kept in the
/// database's own tree so that no number is given twice, across restarts and concurrent clients,
/// and shown, as RavenDB keeps it, in the document <c>Raven/Hilo/{tag}</c>
/// (<c>{"Max":64,"@metadata":{"@collection":"@hilo"}}</c>), which clients may load. A higher
/// <c>Max</c> written into that document (an import of RavenDB's, an edit) is honoured by the next
/// range. Every change goes through the merger and is durable before it is answered.
/// </summary>
/// <remarks>
/// <code>
/// tree "HiLo"   key: lowercased tag, UTF-8
///               value: offset 0  8  highest number handed out (int64 LE)
///                      offset 8  8  the low end of the last range handed out (int64 LE)
/// </code>
/// </remarks>
public static class HiLoRanges
{
    public const string TreeName = "HiLo";

    /// <summary>The first range of a tag, and the least any range shrinks to.</summary>
    public const long MinimumSize = 32;

    /// <summary>The most a range grows to.</summary>
    public const long MaximumSize = 1024 * 1024;

    /// <summary>The collection of the HiLo documents, as RavenDB names it.</summary>
    public const string Collection = "@hilo";

    /// <summary>The document that shows a tag's state: <c>Raven/Hilo/users</c>.</summary>
    public static string DocumentId(string tag) => "Raven/Hilo/" + tag;

    /// <summary>
    /// The size of the next range: it doubles while a client comes back for more within 30 seconds,
    /// and halves when it comes back after more than a minute, as RavenDB's server decides it.
    /// </summary>
    public static long NextSize(long lastSize, DateTime lastRangeAt, DateTime now)
    {
        if (lastSize <= 0 || lastRangeAt == default)
        {
            return MinimumSize;
        }
        var since = now - lastRangeAt;
        if (since < TimeSpan.FromSeconds(30))
        {
            return lastSize >= MaximumSize / 2 ? MaximumSize : lastSize * 2;
        }
        if (since > TimeSpan.FromMinutes(1))
        {
            return Math.Clamp(lastSize / 2, MinimumSize, MaximumSize);
        }
        return Math.Clamp(lastSize, MinimumSize, MaximumSize);
    }

    /// <summary>Takes the next range of a tag (in the merger; durable when the command completes).</summary>
    public sealed class NextCommand(string tag, long size, long lastMax) : IMergedCommand<DatabaseTransaction>
    {
        public HiLoRange Result { get; private set; }

        public void Execute(DatabaseTransaction transaction)
        {
            var tree = transaction.GetTree(TreeName);
            var key = Key(tag);
            var max = Math.Max(tree.TryGet(key, out var value) ? BinaryPrimitives.ReadInt64LittleEndian(value) : 0, DocumentMax(transaction, tag));
            // A client that saw a higher number (it cannot, unless the tree was lost) never gets it again.
            if (lastMax > long.MaxValue - MaximumSize || max > long.MaxValue - MaximumSize)
            {
                throw new Errors.BadRequestException($"HiLo tag '{tag}' has run out of numbers.");
            }
            var low = Math.Max(max, lastMax) + 1;
            var high = checked(low + size - 1);
            Span<byte> stored = stackalloc byte[2 * sizeof(long)];
            BinaryPrimitives.WriteInt64LittleEndian(stored, high);
            BinaryPrimitives.WriteInt64LittleEndian(stored[sizeof(long)..], low);
            tree.Put(key, stored);
            WriteDocument(transaction, tag, high);
            Result = new HiLoRange(low, high, size, DateTime.UtcNow);
        }
    }

    /// <summary>
    /// Gives back the unused end of a range: only when nobody took a range after it, the highest
    /// number falls back to <paramref name="last"/>, the last one the client used.
    /// </summary>
    public sealed class ReturnCommand(string tag, long end, long last) : IMergedCommand<DatabaseTransaction>
    {
        public bool Returned { get; private set; }

        public void Execute(DatabaseTransaction transaction)
        {
            var tree = transaction.GetTree(TreeName);
            var key = Key(tag);
            Returned = false;
            if (last >= end || !tree.TryGet(key, out var value) || value.Length < 2 * sizeof(long) || BinaryPrimitives.ReadInt64LittleEndian(value) != end)
            {
                return;
            }
            // Only the range's own unused end comes back: never below its low end, which its
            // client may have used already.
            var low = BinaryPrimitives.ReadInt64LittleEndian(value[sizeof(long)..]);
            if (last < low - 1)
            {
                return;
            }
            Span<byte> stored = stackalloc byte[2 * sizeof(long)];
            BinaryPrimitives.WriteInt64LittleEndian(stored, last);
            BinaryPrimitives.WriteInt64LittleEndian(stored[sizeof(long)..], low);
            tree.Put(key, stored);
            WriteDocument(transaction, tag, last);
            Returned = true;
        }
    }

    private static byte[] Key(string tag) => Encoding.UTF8.GetBytes(tag.ToLowerInvariant());

    /// <summary>The <c>Max</c> of the tag's document, 0 when there is none or it holds no whole number.</summary>
    private static long DocumentMax(DatabaseTransaction transaction, string tag)
    {
        if (!transaction.TryGet(DocumentId(tag), out var record))
        {
            return 0;
        }
        return Storage.Blittable.BlittableReader.Open(record.Document).TryGet("Max"u8, out var max) && max.TryGetInt64(out var value) && value > 0 ? value : 0;
    }

    private static void WriteDocument(DatabaseTransaction transaction, string tag, long max)
    {
        using var context = new Storage.Blittable.JsonOperationContext();
        var json = Encoding.UTF8.GetBytes("{\"Max\":" + max.ToString(System.Globalization.CultureInfo.InvariantCulture) + ",\"@metadata\":{\"@collection\":\"" + Collection + "\"}}");
        var document = context.Parse(json, Storage.Blittable.BlittableMode.Disk);
        // The put copies the stamped document into the tree: nothing of the context outlives it.
        transaction.Put(DocumentId(tag), document.Span, Collection, null, context);
    }
}
