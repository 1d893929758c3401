using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Configuration;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>Server settings from configuration; the Changes: keys are in <c>ChangesOptionsTests</c>.</summary>
public class ServerOptionsTests
{
    private static ServerOptions From(string key, string value) =>
        ServerOptions.FromConfiguration(new ConfigurationBuilder()
            .AddInMemoryCollection([new KeyValuePair<string, string?>(key, value)])
            .Build());

    [Theory]
    [InlineData("http://127.0.0.1:0")]
    [InlineData("http://0.0.0.0:8080; http://[::1]:8080")]
    [InlineData("http://localhost:8080")]
    [InlineData("http://*:8080")]
    [InlineData("HTTP://+:8080")]
    public void UrlsKestrelCanListenOnAreTaken(string urls) => Assert.Equal(urls, From("Urls", urls).Urls);

    [Theory]
    [InlineData("foo", "Urls 'foo' is not an address to listen on; set it with --urls http://127.0.0.1:8080")]
    [InlineData("http://127.0.0.1:0;9000", "Urls '9000' is not an address to listen on")]
    [InlineData("https://127.0.0.1:8443", "Urls 'https://127.0.0.1:8443' is not http: Jackdaw serves plain http")]
    public void BadUrlsAreRefusedByName(string urls, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From("Urls", urls));
        Assert.StartsWith(message, error.Message, StringComparison.Ordinal);
    }
}
