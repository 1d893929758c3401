using System.Reflection;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Architecture;

/// <summary>
/// Every <see cref="LoggerMessageAttribute"/> of the server names its own event id: a log search by
/// id (an alert on 724, say) must find one message, not two that grew apart in different files.
/// The request log and the slow-query log each have their own category and keep 1.
/// </summary>
public sealed class LogEventIdTests
{
    [Fact]
    public void NoTwoLogMessagesOfTheServerShareAnEventId()
    {
        var messages = LogMessages().Where(m => m.Id != 1).ToList();
        Assert.True(messages.Count > 20, $"only {messages.Count} log messages were found: the check does not read the server");
        var shared = messages.GroupBy(m => m.Id).Where(g => g.Count() > 1)
            .Select(g => $"{g.Key}: {string.Join(", ", g.Select(m => m.Where))}")
            .ToList();
        Assert.True(shared.Count == 0, $"These event ids are used more than once: {string.Join("; ", shared)}");
    }

    private static IEnumerable<(int Id, string Where)> LogMessages() =>
        from type in typeof(Jackdaw.Server.Hosting.ServerContext).Assembly.GetTypes()
        from method in type.GetMethods(BindingFlags.Static | BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly)
        let attribute = method.GetCustomAttribute<LoggerMessageAttribute>()
        where attribute is not null
        select (attribute.EventId, $"{type.Name}.{method.Name}");
}
