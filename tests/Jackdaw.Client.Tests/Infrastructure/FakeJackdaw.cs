using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Jackdaw.Client.Tests.Infrastructure;

/// <summary>
/// An in-memory server speaking the Jackdaw wire protocol, as an <see cref="HttpMessageHandler"/>:
/// it records every request the client sends and answers as the real server is specified to.
/// <see cref="Intercept"/> replaces the answer to chosen requests.
/// </summary>
public sealed partial class FakeJackdaw : HttpMessageHandler
{
    private readonly object _lock = new();
    private readonly Dictionary<string, Dictionary<string, StoredDocument>> _databases = new(StringComparer.OrdinalIgnoreCase);
    private long _etag;
    private long _generated;
    private int _bulkInsertLines;

    public FakeJackdaw(params string[] databases)
    {
        foreach (var name in databases)
        {
            _databases[name] = new Dictionary<string, StoredDocument>(StringComparer.OrdinalIgnoreCase);
        }
    }

    public ConcurrentQueue<RecordedRequest> Requests { get; } = new();

    /// <summary>Answers a request instead of the fake's protocol logic when it returns non-null.</summary>
    public Func<RecordedRequest, HttpResponseMessage?>? Intercept { get; set; }

    /// <summary>The answer to <c>POST queries</c> (see <see cref="QueryResult"/>); by default no results.</summary>
    public Func<RecordedRequest, JsonObject>? AnswerQuery { get; set; }

    /// <summary>bulk_insert answers 400 on this (1-based) line, committing nothing after the last full batch.</summary>
    public int? BulkInsertFailAtLine { get; set; }

    /// <summary>Documents per merged bulk_insert transaction.</summary>
    public int BulkInsertBatchSize { get; set; } = 1000;

    /// <summary>bulk_insert lines parsed so far (read while the client is still streaming).</summary>
    public int BulkInsertLinesReceived => Volatile.Read(ref _bulkInsertLines);

    /// <summary>Raised for each bulk_insert line as it is parsed.</summary>
    public Action<int>? OnBulkInsertLine { get; set; }

    public List<RecordedRequest> RequestsTo(string pathPart) => [.. Requests.Where(r => r.PathAndQuery.Contains(pathPart, StringComparison.Ordinal))];

    public JsonObject? Stored(string database, string id)
    {
        lock (_lock)
            return _databases[database].TryGetValue(id, out var doc) ? (JsonObject)doc.Body.DeepClone() : null;
    }

    public int Count(string database)
    {
        lock (_lock)
            return _databases[database].Count;
    }

    /// <summary>Puts a document directly, as another client would; returns its change vector.</summary>
    public string Put(string database, string id, JsonObject document)
    {
        lock (_lock)
            return PutLocked(_databases[database], id, document).ChangeVector;
    }

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        var uri = request.RequestUri!;
        var path = uri.AbsolutePath;
        var isBulkInsert = path.EndsWith("/bulk_insert", StringComparison.Ordinal);
        var body = request.Content is null || isBulkInsert ? null : await request.Content.ReadAsStringAsync(cancellationToken);
        var recorded = new RecordedRequest(request.Method.Method, uri.PathAndQuery, body, request.Content?.Headers.ContentType?.ToString(), request.Headers.TransferEncodingChunked == true);
        Requests.Enqueue(recorded);
        if (Intercept?.Invoke(recorded) is { } intercepted)
        {
            return intercepted;
        }

        var query = ParseQuery(uri.Query);
        if (path == "/admin/databases" || (path == "/databases" && request.Method == HttpMethod.Get))
        {
            return Databases(request.Method.Method, query);
        }

        var segments = path.Split('/', StringSplitOptions.RemoveEmptyEntries);
        if (IndexRoute(segments) is { } route)
        {
            return Indexes(request.Method.Method, Uri.UnescapeDataString(segments[1]), route, query, body);
        }
        if (segments.Length != 3 || segments[0] != "databases")
        {
            return Error(HttpStatusCode.NotFound, "RouteNotFoundException", $"No route matches '{request.Method} {path}'.");
        }
        var database = Uri.UnescapeDataString(segments[1]);
        Dictionary<string, StoredDocument>? docs;
        lock (_lock)
            _databases.TryGetValue(database, out docs);
        if (docs is null)
        {
            return Error(HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException", $"Database '{database}' does not exist.");
        }

        return (request.Method.Method, segments[2]) switch
        {
            ("GET", "docs") => Get(docs, query.GetValueOrDefault("id") ?? []),
            ("POST", "bulk_docs") => BulkDocs(docs, body!),
            ("POST", "bulk_insert") => await BulkInsertAsync(docs, request.Content!, cancellationToken),
            ("POST", "queries") => Json(HttpStatusCode.OK, AnswerQuery?.Invoke(recorded) ?? QueryResult([])),
            _ => Error(HttpStatusCode.NotFound, "RouteNotFoundException", "no route"),
        };
    }

    private HttpResponseMessage Databases(string method, Dictionary<string, List<string>> query)
    {
        var name = query.GetValueOrDefault("name")?.FirstOrDefault();
        lock (_lock)
        {
            switch (method)
            {
                case "GET":
                    return Json(HttpStatusCode.OK, new JsonObject { ["Databases"] = new JsonArray([.. _databases.Keys.Order().Select(k => JsonValue.Create(k))]) });
                case "PUT" when name is null || !System.Text.RegularExpressions.Regex.IsMatch(name, "^[A-Za-z0-9_.-]{1,64}$"):
                    return Error(HttpStatusCode.BadRequest, "BadRequestException", $"Invalid database name '{name}'.");
                case "PUT" when _databases.ContainsKey(name):
                    return Error(HttpStatusCode.Conflict, "DatabaseAlreadyExistsException", $"Database '{name}' already exists.");
                case "PUT":
                    _databases[name] = new(StringComparer.OrdinalIgnoreCase);
                    return Json(HttpStatusCode.Created, new JsonObject { ["Name"] = name });
                case "DELETE" when name is null || !_databases.Remove(name):
                    return Error(HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException", $"Database '{name}' does not exist.");
                case "DELETE":
                    return new HttpResponseMessage(HttpStatusCode.NoContent);
                default:
                    return Error(HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException", method);
            }
        }
    }

    private HttpResponseMessage Get(Dictionary<string, StoredDocument> docs, List<string> ids)
    {
        lock (_lock)
        {
            if (ids.Count == 1 && !docs.ContainsKey(ids[0]))
            {
                return Error(HttpStatusCode.NotFound, "DocumentDoesNotExistException", $"Document '{ids[0]}' does not exist.");
            }
            var results = new JsonArray();
            foreach (var id in ids)
            {
                results.Add(docs.TryGetValue(id, out var doc) ? doc.WithServerMetadata() : null);
            }
            return Json(HttpStatusCode.OK, new JsonObject { ["Results"] = results, ["Includes"] = new JsonObject() });
        }
    }

    private HttpResponseMessage BulkDocs(Dictionary<string, StoredDocument> docs, string body)
    {
        JsonArray commands;
        try
        {
            commands = JsonNode.Parse(body)!["Commands"]!.AsArray();
        }
        catch (Exception e) when (e is JsonException or NullReferenceException or InvalidOperationException)
        {
            return Error(HttpStatusCode.BadRequest, "BadRequestException", "Malformed bulk_docs body: " + e.Message);
        }

        lock (_lock)
        {
            foreach (var command in commands)
            {
                var id = (string)command!["Id"]!;
                var expected = (string?)command["ChangeVector"];
                if (expected is null)
                {
                    continue;
                }
                if (!docs.TryGetValue(id, out var existing) || existing.ChangeVector != expected)
                {
                    return Error(HttpStatusCode.Conflict, "ConcurrencyException", $"Document '{id}' has change vector '{existing?.ChangeVector}', not '{expected}'.");
                }
            }

            var results = new JsonArray();
            foreach (var command in commands)
            {
                var id = (string)command!["Id"]!;
                if ((string?)command["Type"] == "DELETE")
                {
                    results.Add(new JsonObject { ["Type"] = "DELETE", ["Id"] = id, ["Deleted"] = docs.Remove(id) });
                    continue;
                }

                id = CompleteId(docs, id);
                var stored = PutLocked(docs, id, command["Document"]!.AsObject());
                results.Add(new JsonObject { ["Type"] = "PUT", ["@id"] = stored.Id, ["@change-vector"] = stored.ChangeVector, ["@last-modified"] = stored.LastModified });
            }

            return Json(HttpStatusCode.OK, new JsonObject { ["Results"] = results });
        }
    }

    private async Task<HttpResponseMessage> BulkInsertAsync(Dictionary<string, StoredDocument> docs, HttpContent content, CancellationToken token)
    {
        // Consume the request body as it is produced, the way Kestrel hands it to the server.
        var pipe = new Pipe();
        var copy = Task.Run(async () =>
        {
            try
            {
                await content.CopyToAsync(pipe.Writer.AsStream(leaveOpen: true), token);
                await pipe.Writer.CompleteAsync();
            }
            catch (Exception e)
            {
                await pipe.Writer.CompleteAsync(e);
            }
        }, token);

        using var reader = new StreamReader(pipe.Reader.AsStream(), Encoding.UTF8);
        var batch = new List<(string Id, JsonObject Document)>();
        var committed = 0;
        var lineNumber = 0;
        while (await reader.ReadLineAsync(token) is { } line)
        {
            lineNumber++;
            if (line.Length == 0)
            {
                continue;
            }
            Interlocked.Increment(ref _bulkInsertLines);
            OnBulkInsertLine?.Invoke(lineNumber);
            JsonObject? parsed = null;
            try
            {
                parsed = JsonNode.Parse(line)?.AsObject();
            }
            catch (JsonException)
            {
            }

            if (lineNumber == BulkInsertFailAtLine || parsed?["Id"] is null || parsed["Document"] is not JsonObject)
            {
                // Stop reading: the client's pending writes fail, as when the server closes the stream.
                await pipe.Reader.CompleteAsync(new IOException("server stopped reading"));
                return Error(HttpStatusCode.BadRequest, "BadRequestException", $"Malformed document on line {lineNumber}; {committed} documents were committed before it.");
            }

            batch.Add(((string)parsed["Id"]!, parsed["Document"]!.AsObject()));
            if (batch.Count == BulkInsertBatchSize)
            {
                committed += Commit(docs, batch);
            }
        }

        committed += Commit(docs, batch);
        await copy;
        return Json(HttpStatusCode.OK, new JsonObject { ["Count"] = committed });
    }

    private int Commit(Dictionary<string, StoredDocument> docs, List<(string Id, JsonObject Document)> batch)
    {
        lock (_lock)
        {
            foreach (var (id, document) in batch)
            {
                PutLocked(docs, id, (JsonObject)document.DeepClone());
            }
        }

        var count = batch.Count;
        batch.Clear();
        return count;
    }

    private string CompleteId(Dictionary<string, StoredDocument> docs, string id)
    {
        if (id.EndsWith('/'))
        {
            return id + (++_generated).ToString("D19", System.Globalization.CultureInfo.InvariantCulture) + "-A";
        }
        if (id.EndsWith('|'))
        {
            var prefix = id[..^1] + "/";
            var next = 1;
            while (docs.ContainsKey(prefix + next))
            {
                next++;
            }
            return prefix + next;
        }

        return id;
    }

    private StoredDocument PutLocked(Dictionary<string, StoredDocument> docs, string id, JsonObject document)
    {
        var body = (JsonObject)document.DeepClone();
        var metadata = body["@metadata"] as JsonObject ?? new JsonObject();
        body.Remove("@metadata");
        var etag = ++_etag;
        var casing = docs.TryGetValue(id, out var existing) ? existing.Id : id;
        var stored = new StoredDocument(casing, body, (JsonObject)metadata.DeepClone(), $"A:{etag}-fake", "2026-11-23T10:00:00.0000000Z");
        docs[id] = stored;
        return stored;
    }

    private static Dictionary<string, List<string>> ParseQuery(string query)
    {
        var result = new Dictionary<string, List<string>>();
        foreach (var pair in query.TrimStart('?').Split('&', StringSplitOptions.RemoveEmptyEntries))
        {
            var eq = pair.IndexOf('=', StringComparison.Ordinal);
            var key = Uri.UnescapeDataString(eq < 0 ? pair : pair[..eq]);
            var value = eq < 0 ? "" : Uri.UnescapeDataString(pair[(eq + 1)..]);
            if (!result.TryGetValue(key, out var list))
            {
                result[key] = list = [];
            }
            list.Add(value);
        }

        return result;
    }

    /// <summary>A query answer in the server's shape; <paramref name="total"/> defaults to the number of results.</summary>
    public static JsonObject QueryResult(IEnumerable<JsonNode?> results, JsonObject? includes = null, long? total = null, string indexName = "collection/Orders", bool isStale = false)
    {
        var array = new JsonArray([.. results.Select(r => r?.DeepClone())]);
        return new JsonObject
        {
            ["TotalResults"] = total ?? array.Count,
            ["SkippedResults"] = 0,
            ["Results"] = array,
            ["Includes"] = includes?.DeepClone() ?? new JsonObject(),
            ["IndexName"] = indexName,
            ["IsStale"] = isStale,
            ["IndexTimestamp"] = "2026-11-23T10:00:00.0000000Z",
            ["LastQueryTime"] = "2026-11-23T10:00:01.0000000Z",
            ["ResultEtag"] = 123,
            ["NodeTag"] = "A",
            ["DurationInMs"] = 7,
        };
    }

    /// <summary>A document as the server sends it in results: its body plus <c>@metadata</c> with id, collection and change vector.</summary>
    public static JsonObject Document(string id, string collection, JsonObject body)
    {
        var document = (JsonObject)body.DeepClone();
        document["@metadata"] = new JsonObject { ["@id"] = id, ["@collection"] = collection, ["@change-vector"] = "A:1-" + id, ["@last-modified"] = "2026-11-23T10:00:00.0000000Z" };
        return document;
    }

    public static HttpResponseMessage Json(HttpStatusCode status, JsonNode body) =>
        new(status) { Content = new StringContent(body.ToJsonString(), Encoding.UTF8, "application/json") };

    public static HttpResponseMessage Error(HttpStatusCode status, string type, string message) =>
        Json(status, new JsonObject { ["Type"] = type, ["Message"] = message });

    private sealed record StoredDocument(string Id, JsonObject Body, JsonObject Metadata, string ChangeVector, string LastModified)
    {
        public JsonObject WithServerMetadata()
        {
            var document = (JsonObject)Body.DeepClone();
            var metadata = (JsonObject)Metadata.DeepClone();
            metadata["@id"] = Id;
            metadata["@change-vector"] = ChangeVector;
            metadata["@last-modified"] = LastModified;
            document["@metadata"] = metadata;
            return document;
        }
    }
}

public sealed record RecordedRequest(string Method, string PathAndQuery, string? Body, string? ContentType, bool Chunked)
{
    public JsonNode BodyJson => JsonNode.Parse(Body!)!;
}
