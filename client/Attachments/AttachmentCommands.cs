using System.Net;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Json;
using Jackdaw.Client.Http;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Attachments;

/// <summary>
/// The requests on one attachment, in RavenDB's shapes (<c>/databases/{db}/attachments?id=&amp;name=</c>),
/// shared by the session and the store's operations.
/// </summary>
internal static class AttachmentCommands
{
    /// <summary>
    /// <c>PUT ...&amp;contentType=</c> with the bytes as the body (<c>If-Match</c> the attachment's expected
    /// change vector when given); the answer is the stored attachment's details.
    /// </summary>
    public static async Task<AttachmentDetails> PutAsync(RequestExecutor executor, string databasePath, string documentId, string name, Stream stream, string? contentType, string? changeVector, CancellationToken token)
    {
        ThrowIfInvalid(documentId, name);
        ArgumentNullException.ThrowIfNull(stream);
        var path = Path(databasePath, documentId, name) + (string.IsNullOrEmpty(contentType) ? "" : "&contentType=" + Uri.EscapeDataString(contentType));
        var start = AttachmentStreamContent.StartOf(stream);
        var started = new StrongBox<bool>();
        using var response = await executor.SendAsync(
            HttpMethod.Put, path, () => new AttachmentStreamContent(stream, start, started), IfMatch(changeVector), streamAnswer: false, serverWait: null, session: null,
            () => AttachmentStreamContent.CanSend(start, started), token).ConfigureAwait(false);
        var body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        try
        {
            using var json = JsonDocument.Parse(body);
            return ReadDetails(json.RootElement, documentId, name);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to PUT attachments is not JSON: {e.Message}", e);
        }
    }

    /// <summary>
    /// <c>GET</c> (or, for a revision's attachment, <c>POST</c> with <c>{"Type":"Revision","ChangeVector":...}</c>
    /// as RavenDB's client asks) answered as a stream; null when the document or the attachment does
    /// not exist. <paramref name="from"/> and <paramref name="to"/> (inclusive) ask for a range of the bytes.
    /// </summary>
    public static async Task<AttachmentResult?> GetAsync(RequestExecutor executor, string databasePath, string documentId, string name, AttachmentType type, string? changeVector, long? from, long? to, CancellationToken token)
    {
        ThrowIfInvalid(documentId, name);
        if (type != AttachmentType.Document && string.IsNullOrEmpty(changeVector))
        {
            throw new ArgumentException($"A {type} attachment is named by the change vector of its revision; give one.", nameof(changeVector));
        }

        if (from is < 0 || to is < 0 || (from is { } f && to is { } t && t < f))
        {
            throw new ArgumentOutOfRangeException(nameof(from), $"The range {from}-{to} is not a range of bytes: both ends are offsets from 0, the first not after the last.");
        }

        Action<HttpRequestHeaders>? headers = from is null && to is null ? null : h => h.Range = new RangeHeaderValue(from ?? 0, to);
        Func<HttpContent>? content = null;
        var method = HttpMethod.Get;
        if (type != AttachmentType.Document)
        {
            var body = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, string?> { ["Type"] = type.ToString(), ["ChangeVector"] = changeVector }, WireJson.Options);
            method = HttpMethod.Post;
            content = () => new ByteArrayContent(body) { Headers = { ContentType = new MediaTypeHeaderValue("application/json") { CharSet = "utf-8" } } };
        }

        HttpResponseMessage response;
        try
        {
            response = await executor.SendAsync(method, Path(databasePath, documentId, name), content, headers, streamAnswer: true, token).ConfigureAwait(false);
        }
        catch (JackdawException e) when (IsMissing(e))
        {
            return null;
        }

        try
        {
            var details = new AttachmentDetails
            {
                Name = name,
                DocumentId = documentId,
                ContentType = response.Content.Headers.ContentType?.ToString() ?? "",
                Hash = Header(response, "Attachment-Hash") ?? "",
                Size = long.TryParse(Header(response, "Attachment-Size"), out var size) ? size : response.Content.Headers.ContentLength ?? 0,
                ChangeVector = ETag(response),
            };
            var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
            return new AttachmentResult(response, stream, details);
        }
        catch
        {
            response.Dispose();
            throw;
        }
    }

    /// <summary><c>HEAD</c>: the attachment's change vector (its <c>ETag</c>), or null when the document or the attachment does not exist.</summary>
    public static async Task<string?> HeadAsync(RequestExecutor executor, string databasePath, string documentId, string name, CancellationToken token)
    {
        ThrowIfInvalid(documentId, name);
        try
        {
            using var response = await executor.SendAsync(HttpMethod.Head, Path(databasePath, documentId, name), null, null, streamAnswer: false, token).ConfigureAwait(false);
            return ETag(response) ?? "";
        }
        catch (JackdawException e) when (IsMissing(e))
        {
            return null;
        }
    }

    /// <summary><c>DELETE</c> (204), with <c>If-Match</c> the attachment's expected change vector when given. Deleting an attachment that is not there is not an error.</summary>
    public static async Task DeleteAsync(RequestExecutor executor, string databasePath, string documentId, string name, string? changeVector, CancellationToken token)
    {
        ThrowIfInvalid(documentId, name);
        using var response = await executor.SendAsync(HttpMethod.Delete, Path(databasePath, documentId, name), null, IfMatch(changeVector), streamAnswer: false, token).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST attachments/bulk</c> with <c>{"AttachmentType":"Document","Attachments":[{"DocumentId","Name"}]}</c>:
    /// the answer is <c>{"AttachmentsMetadata":[...]}</c> followed by each attachment's bytes, in order.
    /// </summary>
    public static async Task<AttachmentsEnumerator> GetManyAsync(RequestExecutor executor, string databasePath, IEnumerable<AttachmentRequest> attachments, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(attachments);
        var list = attachments.ToList();
        if (list.Any(a => a is null))
        {
            throw new ArgumentException("The list of attachments holds a null request.", nameof(attachments));
        }

        var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("AttachmentType", nameof(AttachmentType.Document));
            writer.WriteStartArray("Attachments");
            foreach (var request in list)
            {
                writer.WriteStartObject();
                writer.WriteString("DocumentId", request.DocumentId);
                writer.WriteString("Name", request.Name);
                writer.WriteEndObject();
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        }

        var response = await executor.SendForStreamAsync(HttpMethod.Post, databasePath + "/attachments/bulk", buffer.GetBuffer().AsMemory(0, (int)buffer.Length), null, token).ConfigureAwait(false);
        try
        {
            return await AttachmentsEnumerator.StartAsync(response, list.Count, token).ConfigureAwait(false);
        }
        catch
        {
            response.Dispose();
            throw;
        }
    }

    /// <summary>Reads <c>{"Name","Hash","ContentType","Size","ChangeVector","DocumentId"}</c> (a PUT's answer, a bulk read's metadata).</summary>
    public static AttachmentDetails ReadDetails(JsonElement element, string? documentId, string? name) => new()
    {
        Name = GetString(element, "Name") ?? name ?? "",
        DocumentId = GetString(element, "DocumentId") ?? documentId ?? "",
        Hash = GetString(element, "Hash") ?? "",
        ContentType = GetString(element, "ContentType") ?? "",
        Size = element.TryGetProperty("Size", out var size) && size.TryGetInt64(out var n) ? n : 0,
        ChangeVector = GetString(element, "ChangeVector"),
    };

    public static void ThrowIfInvalid(string documentId, string name)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(documentId);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
    }

    private static string Path(string databasePath, string documentId, string name) =>
        new StringBuilder(databasePath).Append("/attachments?id=").Append(Uri.EscapeDataString(documentId)).Append("&name=").Append(Uri.EscapeDataString(name)).ToString();

    /// <summary>RavenDB's clients send a change vector as a quoted entity tag.</summary>
    private static Action<HttpRequestHeaders>? IfMatch(string? changeVector) =>
        changeVector is null ? null : h => h.TryAddWithoutValidation("If-Match", "\"" + changeVector + "\"");

    /// <summary>A missing document or attachment is a 404; a missing database is not (it is its own error).</summary>
    private static bool IsMissing(JackdawException e) =>
        e.StatusCode == HttpStatusCode.NotFound && e is not DatabaseDoesNotExistException && e.ServerErrorType is null or ErrorTypes.DocumentDoesNotExist or "AttachmentDoesNotExistException";

    private static string? ETag(HttpResponseMessage response) => Header(response, "ETag")?.Trim('"');

    private static string? Header(HttpResponseMessage response, string name) =>
        response.Headers.TryGetValues(name, out var values) || response.Content.Headers.TryGetValues(name, out values) ? values.FirstOrDefault() : null;

    private static string? GetString(JsonElement element, string name) =>
        element.ValueKind == JsonValueKind.Object && element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;
}
