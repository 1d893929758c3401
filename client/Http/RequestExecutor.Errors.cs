using System.Net;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>The executor's errors: a server's error body, or a failed transport, as the <see cref="JackdawException"/> that says it.</summary>
internal sealed partial class RequestExecutor
{
    /// <summary>A failed TLS handshake as a <see cref="CertificateException"/>, anything else as <see cref="TranslateTransportFailure"/> says.</summary>
    private JackdawException Translate(Exception e, HttpMethod method, string url) =>
        (Uri.TryCreate(url, UriKind.Absolute, out var uri) ? _tls.Explain(e, uri) : null) ?? TranslateTransportFailure(e, method, url);

    /// <summary>Reads a non-2xx response's <c>{"Type","Message"}</c> body into the matching exception.</summary>
    public static async Task<JackdawException> CreateErrorAsync(HttpResponseMessage response, HttpMethod method, string pathAndQuery, CancellationToken token)
    {
        byte[] body;
        try
        {
            body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            body = [];
        }

        return CreateError(response.StatusCode, body, method, pathAndQuery);
    }

    public static JackdawException CreateError(HttpStatusCode status, ReadOnlySpan<byte> body, HttpMethod method, string pathAndQuery)
    {
        string? type = null, message = null;
        try
        {
            var reader = new Utf8JsonReader(body);
            if (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
            {
                while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
                {
                    var isType = reader.ValueTextEquals("Type"u8);
                    var isMessage = reader.ValueTextEquals("Message"u8);
                    reader.Read();
                    if (isType && reader.TokenType == JsonTokenType.String)
                    {
                        type = reader.GetString();
                    }
                    else if (isMessage && reader.TokenType == JsonTokenType.String)
                    {
                        message = reader.GetString();
                    }
                    else
                    {
                        reader.Skip();
                    }
                }
            }
        }
        catch (JsonException)
        {
            // Not our JSON error body (a proxy's HTML page, say): the raw text below says what it was.
        }

        message ??= $"{method} {pathAndQuery} failed with {(int)status} {status}: {System.Text.Encoding.UTF8.GetString(body[..Math.Min(body.Length, 500)])}";
        return type switch
        {
            ErrorTypes.Concurrency => new ConcurrencyException(message, status, type),
            ErrorTypes.DocumentDoesNotExist => new DocumentDoesNotExistException(message, status, type),
            ErrorTypes.DatabaseDoesNotExist => new DatabaseDoesNotExistException(message, status, type),
            ErrorTypes.DatabaseAlreadyExists => new DatabaseAlreadyExistsException(message, status, type),
            ErrorTypes.BadRequest or ErrorTypes.InvalidJson => new BadRequestException(message, status, type),
            ErrorTypes.InvalidQuery => new InvalidQueryException(message, status, type),
            ErrorTypes.IndexDoesNotExist => new IndexDoesNotExistException(message, status, type),
            ErrorTypes.IndexCompilation => new IndexCompilationException(message, status, type),
            ErrorTypes.IndexLocked => new IndexLockedException(message, status, type),
            ErrorTypes.Timeout or ErrorTypes.RavenTimeout => new ServerTimeoutException(message, status, type),
            ErrorTypes.AnalyzerCompilation => new AnalyzerCompilationException(message, status, type),
            ErrorTypes.AnalyzerInUse => new AnalyzerInUseException(message, status, type),
            ErrorTypes.Authorization => new AuthorizationException(message, status, type),
            _ => new JackdawException(message, status, type),
        };
    }

    public static JackdawException TranslateTransportFailure(Exception e, HttpMethod method, string url) => e switch
    {
        OperationCanceledException => new ServerUnavailableException($"{method} {url} got no answer within the request timeout (DocumentConventions.RequestTimeout).", e),
        HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError } =>
            new ServerUnavailableException($"Could not connect to the Jackdaw server for {method} {url} ({e.Message}). Check that the server is running and that DocumentStore.Urls points at it.", e),
        HttpRequestException { HttpRequestError: HttpRequestError.ResponseEnded } when url.StartsWith("http://", StringComparison.OrdinalIgnoreCase) =>
            new ServerUnavailableException($"The Jackdaw server closed the connection without answering {method} {url}; a write may or may not have been applied. {SecuredServerHint}", e),
        HttpRequestException or IOException =>
            new ServerUnavailableException($"The connection to the Jackdaw server broke during {method} {url} ({e.Message}); a write may or may not have been applied.", e),
        JackdawException j => j,
        _ => new JackdawException($"{method} {url} failed: {e.Message}", e),
    };
}
