using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>Server settings from configuration; the Changes: keys are in <c>ChangesOptionsTests</c>.</summary>
public class ServerOptionsTests
{
    private static ServerOptions From(string key, string value) => Configured.Options((key, value));

    private static ServerOptions From(params (string Key, string Value)[] settings) => Configured.Options(settings);

    [Theory]
    [InlineData("http://127.0.0.1:0")]
    [InlineData("http://localhost:8080")]
    [InlineData("http://[::1]:8080;http://127.0.0.1:8081")]
    public void LoopbackUrlsAreTaken(string urls) => Assert.Equal(urls, From("Urls", urls).Urls);

    [Theory]
    [InlineData("http://0.0.0.0:8080; http://[::1]:8080")]
    [InlineData("http://*:8080")]
    [InlineData("HTTP://+:8080")]
    [InlineData("http://192.0.2.1:8080")]
    public void PublicUrlsNeedUnsecuredAccessAllowedPublicNetwork(string urls)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From("Urls", urls));
        Assert.Contains("--Security:UnsecuredAccessAllowed=PublicNetwork", error.Message, StringComparison.Ordinal);
        Assert.Equal(urls, From(("Urls", urls), ("Security:UnsecuredAccessAllowed", "PublicNetwork")).Urls);
    }

    [Theory]
    [InlineData("foo", "Urls 'foo' is not an address to listen on; set it with --urls http://127.0.0.1:8080")]
    [InlineData("http://127.0.0.1:0;9000", "Urls '9000' is not an address to listen on")]
    [InlineData("https://127.0.0.1:8443", "Urls 'https://127.0.0.1:8443' is https but no server certificate is given")]
    [InlineData("ftp://127.0.0.1:8443", "Urls 'ftp://127.0.0.1:8443' is neither http nor https")]
    public void BadUrlsAreRefusedByName(string urls, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From("Urls", urls));
        Assert.StartsWith(message, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TheSlowQueryLogHasDefaultsAndTakesItsSettings()
    {
        var defaults = From("Urls", "http://127.0.0.1:0").SlowQueries;
        Assert.Equal((500, 256), (defaults.ThresholdMs, defaults.LogSize));
        var set = From(("Queries:SlowQueryThresholdMs", "0"), ("Queries:SlowQueryLogSize", "10")).SlowQueries;
        Assert.Equal((0, 10), (set.ThresholdMs, set.LogSize));
    }

    [Theory]
    [InlineData("Queries:SlowQueryThresholdMs", "-1", "Queries:SlowQueryThresholdMs '-1' is not a whole number of milliseconds")]
    [InlineData("Queries:SlowQueryThresholdMs", "fast", "Queries:SlowQueryThresholdMs 'fast' is not a whole number of milliseconds")]
    [InlineData("Queries:SlowQueryLogSize", "0", "Queries:SlowQueryLogSize '0' is not a positive whole number")]
    public void BadSlowQuerySettingsAreRefusedByName(string key, string value, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From(key, value));
        Assert.StartsWith(message, error.Message, StringComparison.Ordinal);
    }
}
