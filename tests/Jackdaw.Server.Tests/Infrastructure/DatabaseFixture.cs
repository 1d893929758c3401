using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>One in-process server shared by a test class; each test makes its own database.</summary>
public class ServerFixture : IAsyncLifetime
{
    private InProcessServer? _server;
    private int _databases;

    public InProcessServer Server => _server ?? throw new InvalidOperationException("The server has not started.");

    public HttpClient Client => Server.Client;

    /// <summary>The server's command line, besides its address and data folder.</summary>
    protected virtual string[] Args => ["--max-body-size", "67108864"];

    public async Task InitializeAsync() => _server = await InProcessServer.StartAsync(Args);

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }

    /// <summary>Creates a fresh database and returns its name.</summary>
    public async Task<string> CreateDatabaseAsync()
    {
        var name = $"db{Interlocked.Increment(ref _databases)}";
        using var response = await Client.PutAsync($"/admin/databases?name={name}", null);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return name;
    }
}

public static class Api
{
    public static StringContent Json(string json) => new(json, Encoding.UTF8, "application/json");

    public static async Task<JsonElement> JsonAsync(HttpResponseMessage response)
    {
        var text = await response.Content.ReadAsStringAsync();
        try
        {
            return JsonDocument.Parse(text).RootElement.Clone();
        }
        catch (JsonException e)
        {
            throw new InvalidOperationException($"Not JSON ({(int)response.StatusCode}): {text}", e);
        }
    }

    /// <summary>Asserts an error response: the status and the <c>Type</c> of its JSON body.</summary>
    public static async Task<string> AssertErrorAsync(HttpResponseMessage response, HttpStatusCode status, string type)
    {
        var body = await JsonAsync(response);
        Assert.True(status == response.StatusCode, $"Expected {status}, got {response.StatusCode}: {body}");
        Assert.Equal(type, body.GetProperty("Type").GetString());
        var message = body.GetProperty("Message").GetString();
        // RavenDB's clients read "Error": the same text.
        Assert.Equal(message, body.GetProperty("Error").GetString());
        Assert.False(string.IsNullOrWhiteSpace(message));
        Assert.DoesNotContain("   at ", message, StringComparison.Ordinal);
        return message!;
    }

    public static HttpRequestMessage Request(HttpMethod method, string uri, string? json = null, string? ifMatch = null, string? ifNoneMatch = null)
    {
        var request = new HttpRequestMessage(method, uri);
        if (json is not null)
        {
            request.Content = Json(json);
        }
        if (ifMatch is not null)
        {
            request.Headers.TryAddWithoutValidation("If-Match", ifMatch);
        }
        if (ifNoneMatch is not null)
        {
            request.Headers.IfNoneMatch.Add(new EntityTagHeaderValue(ifNoneMatch));
        }
        return request;
    }
}
