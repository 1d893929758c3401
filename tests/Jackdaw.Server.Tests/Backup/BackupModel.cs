using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// The history of a database as its writers saw it acknowledged: every PUT with the etag its change
/// vector gave, every DELETE (whose tombstone etag is read from the source afterwards; a deleted id
/// is never written again, so each tombstone stays). The state as of etag E is, per id, the last
/// event at or below E: what a restore of a backup covering E must hold, document by document.
/// </summary>
internal sealed class BackupModel
{
    private readonly Lock _lock = new();
    private readonly List<(string Id, long Etag)> _puts = [];
    private readonly HashSet<string> _deleted = new(StringComparer.OrdinalIgnoreCase);

    public int Puts
    {
        get
        {
            lock (_lock)
                return _puts.Count;
        }
    }

    /// <summary>Runs one bulk_docs batch of PUTs (id, group) and DELETEs (group null) and records what it acknowledged.</summary>
    public async Task WriteAsync(HttpClient client, string db, IReadOnlyList<(string Id, int? Group)> changes)
    {
        var commands = string.Join(',', changes.Select(c => c.Group is { } g
            ? $"{{\"Type\":\"PUT\",\"Id\":\"{c.Id}\",\"Document\":{{\"Group\":{g},\"Name\":\"item {c.Id}\",\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"
            : $"{{\"Type\":\"DELETE\",\"Id\":\"{c.Id}\"}}"));
        using var response = await client.PostAsync($"/databases/{db}/bulk_docs", new StringContent("{\"Commands\":[" + commands + "]}", Encoding.UTF8, "application/json"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        lock (_lock)
        {
            var results = json.GetProperty("Results");
            for (var i = 0; i < changes.Count; i++)
            {
                var (id, group) = changes[i];
                if (group is not null)
                {
                    _puts.Add((id, EtagOf(results[i].GetProperty("@change-vector").GetString()!)));
                }
                else
                {
                    _deleted.Add(id);
                }
            }
        }
    }

    public static long EtagOf(string changeVector) => long.Parse(changeVector.AsSpan(2, changeVector.IndexOf('-') - 2));

    /// <summary>The state as of <paramref name="etag"/>: live documents and tombstones by lowercased id, with their etags.</summary>
    public (Dictionary<string, long> Documents, Dictionary<string, long> Tombstones) At(long etag, DatabaseState source)
    {
        var last = new Dictionary<string, (long Etag, bool Deleted)>(StringComparer.Ordinal);
        void Take(string id, long e, bool deleted)
        {
            if (e > etag)
            {
                return;
            }
            var key = id.ToLowerInvariant();
            if (!last.TryGetValue(key, out var seen) || seen.Etag < e)
            {
                last[key] = (e, deleted);
            }
        }
        lock (_lock)
        {
            foreach (var (id, e) in _puts)
            {
                Take(id, e, deleted: false);
            }
        }
        foreach (var (id, e) in source.Tombstones)
        {
            Take(id, e, deleted: true);
        }
        return (
            last.Where(p => !p.Value.Deleted).ToDictionary(p => p.Key, p => p.Value.Etag),
            last.Where(p => p.Value.Deleted).ToDictionary(p => p.Key, p => p.Value.Etag));
    }

    /// <summary>Asserts that <paramref name="restored"/> holds exactly the state as of <paramref name="etag"/>, and the same bytes as the source for versions the source still has.</summary>
    public void AssertRestored(long etag, DatabaseState source, DatabaseState restored)
    {
        var (documents, tombstones) = At(etag, source);
        Assert.True(documents.Count > 0, "the model has no documents at that etag");
        var missing = documents.Where(d => !restored.Documents.TryGetValue(d.Key, out var r) || r.Etag != d.Value).Select(d => $"{d.Key}@{d.Value}").Take(5).ToList();
        Assert.True(missing.Count == 0, $"documents missing or at another version in the restore: {string.Join(", ", missing)}");
        var extra = restored.Documents.Keys.Where(k => !documents.ContainsKey(k)).Take(5).ToList();
        Assert.True(extra.Count == 0, $"documents in the restore that the state at etag {etag} has not: {string.Join(", ", extra)}");
        Assert.Equal(tombstones.OrderBy(t => t.Key, StringComparer.Ordinal), restored.Tombstones.OrderBy(t => t.Key, StringComparer.Ordinal));
        foreach (var (id, (e, bytes)) in restored.Documents)
        {
            if (source.Documents.TryGetValue(id, out var now) && now.Etag == e)
            {
                Assert.True(now.Bytes.AsSpan().SequenceEqual(bytes), $"document {id} differs from the source's same version");
            }
        }
    }
}

/// <summary>Every document (lowercased id: etag, stored bytes) and tombstone of a database, read in one snapshot.</summary>
internal sealed record DatabaseState(Dictionary<string, (long Etag, byte[] Bytes)> Documents, Dictionary<string, long> Tombstones, long LastEtag)
{
    public static DatabaseState Read(DocumentDatabase database)
    {
        var documents = new Dictionary<string, (long, byte[])>(StringComparer.Ordinal);
        var tombstones = new Dictionary<string, long>(StringComparer.Ordinal);
        using var reader = database.BeginRead();
        foreach (var document in reader.GetDocumentsFrom(null, 0))
        {
            documents[document.Id.ToLowerInvariant()] = (document.Etag, document.Document.ToArray());
        }
        foreach (var tombstone in reader.GetTombstonesFrom(null, 0))
        {
            tombstones[tombstone.Id.ToLowerInvariant()] = tombstone.Etag;
        }
        return new DatabaseState(documents, tombstones, reader.LastEtag);
    }
}
