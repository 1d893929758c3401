using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>
/// <c>bulk_docs?waitForReplicasTimeout=00:00:10&amp;numberOfReplicasToWaitFor=1&amp;throwOnTimeoutInWaitForReplicas=true</c>,
/// as RavenDB's session sends them for <c>waitForReplicationAfterSaveChanges</c>: how long to wait,
/// for how many other nodes (or <c>majority</c>), and whether a timeout is an error (RavenDB's default).
/// </summary>
public sealed record WaitForReplicas(TimeSpan Timeout, int Count, bool Majority, bool Throw)
{
    /// <summary>The longest wait a request may ask for.</summary>
    public static readonly TimeSpan MaxTimeout = TimeSpan.FromHours(1);

    public static WaitForReplicas? Read(UrlQuery query)
    {
        if (query.GetString("waitForReplicasTimeout") is not { } text)
        {
            return null;
        }
        if (!TimeSpan.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var timeout) || timeout < TimeSpan.Zero || timeout > MaxTimeout)
        {
            throw new BadRequestException($"Query parameter 'waitForReplicasTimeout' is '{text}'; it is a time such as 00:00:10 (at most {MaxTimeout}).");
        }
        var count = 1;
        var majority = false;
        switch (query.GetString("numberOfReplicasToWaitFor"))
        {
            case null:
                break;
            case var value when value.Equals("majority", StringComparison.OrdinalIgnoreCase):
                majority = true;
                break;
            case var value when int.TryParse(value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out count) && count >= 0:
                break;
            case var value:
                throw new BadRequestException($"Query parameter 'numberOfReplicasToWaitFor' is '{value}'; it is a number of other nodes, or majority.");
        }
        var @throw = query.GetString("throwOnTimeoutInWaitForReplicas") switch
        {
            null => true,
            var value when value.Equals("true", StringComparison.OrdinalIgnoreCase) => true,
            var value when value.Equals("false", StringComparison.OrdinalIgnoreCase) => false,
            var value => throw new BadRequestException($"Query parameter 'throwOnTimeoutInWaitForReplicas' is '{value}'; it is true or false."),
        };
        return new WaitForReplicas(timeout, count, majority, @throw);
    }
}
