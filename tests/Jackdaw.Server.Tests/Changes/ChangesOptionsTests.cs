using System.Net;
using Jackdaw.Server.Changes;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>The changes feed's limits come from configuration (<c>Changes:*</c>).</summary>
public sealed class ChangesOptionsTests
{
    private static ServerOptions From(params (string Key, string Value)[] settings) => Configured.Options(settings);

    [Fact]
    public void DefaultsUnlessConfigured()
    {
        var defaults = new ChangesOptions();
        var options = From().Changes;
        Assert.Equal(defaults.QueueCapacity, options.QueueCapacity);
        Assert.Equal(defaults.CloseGrace, options.CloseGrace);

        options = From(("Changes:QueueCapacity", "1000"), ("Changes:MaxCommandBytes", "2048"), ("Changes:CloseGrace", "30"), ("Changes:EventStreamHeartbeat", "00:01:00")).Changes;
        Assert.Equal(1000, options.QueueCapacity);
        Assert.Equal(2048, options.MaxCommandBytes);
        Assert.Equal(TimeSpan.FromSeconds(30), options.CloseGrace);
        Assert.Equal(TimeSpan.FromMinutes(1), options.EventStreamHeartbeat);
    }

    [Theory]
    [InlineData("Changes:QueueCapacity", "0", "Changes:QueueCapacity '0' is not a positive whole number")]
    [InlineData("Changes:MaxCommandBytes", "lots", "Changes:MaxCommandBytes 'lots' is not a positive whole number")]
    [InlineData("Changes:CloseGrace", "soon", "Changes:CloseGrace 'soon' is not a time between 0 and 1 hour")]
    [InlineData("Changes:EventStreamHeartbeat", "-00:00:01", "Changes:EventStreamHeartbeat '-00:00:01' is not a time between 0 and 1 hour")]
    [InlineData("Changes:CloseGrace", "50.00:00:00", "Changes:CloseGrace '50.00:00:00' is not a time between 0 and 1 hour")]
    [InlineData("Changes:CloseGrace", "7200", "Changes:CloseGrace '7200' is not a time between 0 and 1 hour")]
    public void BadValuesAreRefusedByName(string key, string value, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From((key, value)));
        Assert.Contains(message, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EveryDatabasesFeedTakesTheServersSettings()
    {
        await using var server = await InProcessServer.StartAsync("--Changes:QueueCapacity=32", "--Changes:CloseGrace=00:01:00");
        var db = "changes-options";
        using (var created = await server.Client.PutAsync($"/admin/databases?name={db}", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        await using var socket = await ChangesSocket.ConnectAsync(server.Client.BaseAddress!, db);
        await socket.CommandAsync("watch-docs", null);
        var feed = ChangesFeed.For(server.Host.Server.Databases.GetDatabase(db));
        Assert.Equal(32, feed.Options.QueueCapacity);
        Assert.Equal(TimeSpan.FromMinutes(1), feed.Options.CloseGrace);
    }
}
