using System.Text;
using System.Text.Json;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Databases;

/// <summary>
/// Named JSON records in a feature tree of the database (index definitions, subscriptions,
/// analyzers): one entry per record, keyed by its lowercased name, so names are unique ignoring
/// case. Written through the merger (<see cref="StoreCommand"/>: durable when it completes), read
/// from a snapshot when the store opens (<see cref="ReadAll"/>).
/// </summary>
/// <remarks>
/// <code>
/// tree {feature}   key: the record's name, lowercased (invariant), UTF-8 (cut and hashed past 1,024 bytes)
///                  value: the record as UTF-8 JSON (the feature's own shape)
/// </code>
/// </remarks>
public static class JsonRecords
{
    /// <summary>
    /// The key of the record named <paramref name="name"/>: its lowercased UTF-8, or, for a name
    /// longer than a key may be (an auto-index over many fields), its first bytes, '#' and the
    /// SHA-256 of the whole (hex), exactly <see cref="Storage.Engine.Tree.MaxKeySize"/> bytes.
    /// </summary>
    public static byte[] Key(string name)
    {
        var bytes = Encoding.UTF8.GetBytes(name.ToLowerInvariant());
        const int max = Storage.Engine.Tree.MaxKeySize;
        if (bytes.Length <= max)
        {
            return bytes;
        }

        var key = new byte[max];
        bytes.AsSpan(0, max - 65).CopyTo(key);
        key[max - 65] = (byte)'#';
        Encoding.ASCII.GetBytes(Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(bytes)), key.AsSpan(max - 64));
        return key;
    }

    /// <summary>
    /// Reads every record of <paramref name="tree"/> from one snapshot, in key order (none when the
    /// tree was never written), handing each to <paramref name="read"/>. A record that cannot be
    /// read (its JSON, or <paramref name="read"/> throws) is handed to <paramref name="skipped"/> and
    /// left out: one bad record does not keep the others from opening.
    /// </summary>
    public static void ReadAll(DocumentDatabase database, string tree, Action<JsonElement> read, Action<Exception> skipped)
    {
        var values = new List<byte[]>();
        using (var reader = database.BeginRead())
        {
            if (reader.GetTree(tree) is { } records)
            {
                using var iterator = records.Iterate();
                var more = iterator.SeekFirst();
                while (more)
                {
                    values.Add(iterator.Value.ToArray());
                    more = iterator.MoveNext();
                }
            }
        }
        foreach (var value in values)
        {
            try
            {
                using var json = JsonDocument.Parse(value);
                read(json.RootElement);
            }
            catch (Exception e)
            {
                skipped(e);
            }
        }
    }

    /// <summary>
    /// Stores records (a null value removes one) in one transaction: all of them or, if the
    /// transaction fails, none.
    /// </summary>
    public sealed class StoreCommand(string tree, IReadOnlyList<(string Name, byte[]? Json)> records) : IMergedCommand<DatabaseTransaction>
    {
        public StoreCommand(string tree, string name, byte[]? json)
            : this(tree, [(name, json)])
        {
        }

        public void Execute(DatabaseTransaction transaction)
        {
            var target = transaction.GetTree(tree);
            foreach (var (name, json) in records)
            {
                if (json is null)
                {
                    target.Delete(Key(name));
                }
                else
                {
                    target.Put(Key(name), json);
                }
            }
        }
    }
}
