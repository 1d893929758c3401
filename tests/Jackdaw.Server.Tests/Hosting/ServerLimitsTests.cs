using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>The <c>Limits</c> section read from configuration; <see cref="RequestLimitsTests"/> and the other limits tests run a server held to them.</summary>
public sealed class ServerLimitsTests
{
    private static ServerOptions From(params (string Key, string Value)[] settings) => Configured.Options(settings);

    [Fact]
    public void DefaultsAreKestrelsWhereNoReasonToDifferAndTheOldLimitsElsewhere()
    {
        var limits = From().Limits;
        var kestrel = new KestrelServerLimits();
        Assert.Equal(kestrel.MaxRequestHeadersTotalSize, limits.MaxRequestHeadersTotalSize);
        Assert.Equal(kestrel.MaxRequestHeaderCount, limits.MaxRequestHeaderCount);
        Assert.Equal(kestrel.KeepAliveTimeout, limits.KeepAliveTimeout);
        Assert.Equal(kestrel.RequestHeadersTimeout, limits.RequestHeadersTimeout);
        Assert.Equal(kestrel.MinRequestBodyDataRate!.BytesPerSecond, (double)limits.MinRequestBodyDataRate!.Value);
        Assert.Equal(kestrel.MinRequestBodyDataRate.GracePeriod, limits.MinRequestBodyDataRateGracePeriod);
        Assert.Equal(10_000, limits.MaxConcurrentConnections);
        Assert.Null(limits.MaxBulkInsertBodySize);
        Assert.Equal(64 * 1024, limits.MaxWebSocketMessageSize);
        Assert.Equal(1024 * 1024, limits.MaxQueryLimit);
        Assert.Equal(64L << 20, limits.MaxDocumentBodySize);
        Assert.Equal(256L << 20, limits.MaxBatchBodySize);
        Assert.Equal(16L << 20, limits.MaxOtherBodySize);
    }

    [Fact]
    public void EveryKeyIsReadWhateverItsCase()
    {
        var limits = From(
            ("Limits:MaxDocumentBodySize", "1000"), ("Limits:MaxBatchBodySize", "2000"), ("Limits:MaxBulkInsertBodySize", "3000"),
            ("Limits:MaxOtherBodySize", "4000"), ("LIMITS:MAXREQUESTHEADERSTOTALSIZE", "5000"), ("Limits:MaxRequestHeaderCount", "6"),
            ("Limits:MaxConcurrentConnections", "7"), ("Limits:KeepAliveTimeout", "8"), ("Limits:RequestHeadersTimeout", "00:00:09"),
            ("Limits:MinRequestBodyDataRate", "10"), ("Limits:MinRequestBodyDataRateGracePeriod", "11"),
            ("Limits:MaxWebSocketMessageSize", "12"), ("limits:maxquerylimit", "13")).Limits;
        Assert.Equal(1000, limits.MaxDocumentBodySize);
        Assert.Equal(2000, limits.MaxBatchBodySize);
        Assert.Equal(3000, limits.MaxBulkInsertBodySize);
        Assert.Equal(4000, limits.MaxOtherBodySize);
        Assert.Equal(5000, limits.MaxRequestHeadersTotalSize);
        Assert.Equal(6, limits.MaxRequestHeaderCount);
        Assert.Equal(7, limits.MaxConcurrentConnections);
        Assert.Equal(TimeSpan.FromSeconds(8), limits.KeepAliveTimeout);
        Assert.Equal(TimeSpan.FromSeconds(9), limits.RequestHeadersTimeout);
        Assert.Equal(10, limits.MinRequestBodyDataRate);
        Assert.Equal(TimeSpan.FromSeconds(11), limits.MinRequestBodyDataRateGracePeriod);
        Assert.Equal(12, limits.MaxWebSocketMessageSize);
        Assert.Equal(13, limits.MaxQueryLimit);
    }

    [Fact]
    public void NoneLiftsTheLimitsThatMayBeLifted()
    {
        var limits = From(("Limits:MaxBulkInsertBodySize", "none"), ("Limits:MaxConcurrentConnections", "None"), ("Limits:MinRequestBodyDataRate", "NONE")).Limits;
        Assert.Null(limits.MaxBulkInsertBodySize);
        Assert.Null(limits.MaxConcurrentConnections);
        Assert.Null(limits.MinRequestBodyDataRate);

        var kestrel = new KestrelServerLimits();
        limits.ApplyTo(kestrel, 1000);
        Assert.Null(kestrel.MaxConcurrentConnections);
        Assert.Null(kestrel.MinRequestBodyDataRate);
    }

    [Theory]
    [InlineData("Limits:MaxDocumentBodySize", "lots", "Limits:MaxDocumentBodySize 'lots' is not a positive number of bytes; set it with --Limits:MaxDocumentBodySize or JACKDAW_LIMITS__MAXDOCUMENTBODYSIZE.")]
    [InlineData("Limits:MaxBatchBodySize", "0", "Limits:MaxBatchBodySize '0' is not a positive number of bytes")]
    [InlineData("Limits:MaxOtherBodySize", "-1", "Limits:MaxOtherBodySize '-1' is not a positive number of bytes")]
    [InlineData("Limits:MaxOtherBodySize", "none", "Limits:MaxOtherBodySize 'none' is not a positive number of bytes")]
    [InlineData("Limits:MaxBulkInsertBodySize", "1.5", "Limits:MaxBulkInsertBodySize '1.5' is not a positive number of bytes")]
    [InlineData("Limits:MaxDocumentBodySize", "300000000", "Limits:MaxDocumentBodySize '300000000' is over MaxRequestBodySize (268,435,456), the ceiling of every request body but a bulk insert's; set it lower, or raise --max-body-size too.")]
    [InlineData("Limits:MaxRequestHeadersTotalSize", "2000000", "Limits:MaxRequestHeadersTotalSize '2000000' is not a whole number from 1 to 1,048,576")]
    [InlineData("Limits:MaxRequestHeaderCount", "0", "Limits:MaxRequestHeaderCount '0' is not a positive whole number; set it with --Limits:MaxRequestHeaderCount")]
    [InlineData("Limits:MaxConcurrentConnections", "many", "Limits:MaxConcurrentConnections 'many' is not a positive whole number")]
    [InlineData("Limits:KeepAliveTimeout", "forever", "Limits:KeepAliveTimeout 'forever' is not a time between 0 and 1 hour")]
    [InlineData("Limits:RequestHeadersTimeout", "0", "Limits:RequestHeadersTimeout '0' is not a time between 0 and 1 hour")]
    [InlineData("Limits:MinRequestBodyDataRate", "fast", "Limits:MinRequestBodyDataRate 'fast' is not a positive whole number")]
    [InlineData("Limits:MinRequestBodyDataRateGracePeriod", "1", "Limits:MinRequestBodyDataRateGracePeriod '1' is not more than 1 second")]
    [InlineData("Limits:MaxWebSocketMessageSize", "64k", "Limits:MaxWebSocketMessageSize '64k' is not a positive whole number")]
    [InlineData("Limits:MaxQueryLimit", "3000000000", "Limits:MaxQueryLimit '3000000000' is not a positive whole number")]
    [InlineData("Limits:MaxDocumentSize", "1000", "Limits:MaxDocumentSize is not a setting; the Limits settings are MaxDocumentBodySize, ")]
    public void BadValuesAreRefusedNamingTheKey(string key, string value, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => From((key, value)));
        Assert.StartsWith(message, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ABodyLimitUnderALowerCeilingIsTheCeilingAndSaysSo()
    {
        var options = From(("MaxRequestBodySize", "1000"));
        var limits = options.Limits;
        Assert.Equal((1000L, "MaxRequestBodySize"), limits.BodyLimit(RequestBodyKind.Document, options.MaxRequestBodySize));
        Assert.Equal((1000L, "MaxRequestBodySize"), limits.BodyLimit(RequestBodyKind.Other, options.MaxRequestBodySize));
        Assert.Equal(((long?)null, "Limits:MaxBulkInsertBodySize"), limits.BodyLimit(RequestBodyKind.BulkInsert, options.MaxRequestBodySize));

        options = From(("MaxRequestBodySize", "1000"), ("Limits:MaxBatchBodySize", "500"));
        Assert.Equal((500L, "Limits:MaxBatchBodySize"), options.Limits.BodyLimit(RequestBodyKind.Batch, options.MaxRequestBodySize));
    }

    [Fact]
    public void TheChangesFeedTakesTheWebSocketLimitUnlessItHasItsOwn()
    {
        Assert.Equal(2048, From(("Limits:MaxWebSocketMessageSize", "2048")).Changes.MaxCommandBytes);
        Assert.Equal(4096, From(("Limits:MaxWebSocketMessageSize", "2048"), ("Changes:MaxCommandBytes", "4096")).Changes.MaxCommandBytes);
        Assert.Equal(64 * 1024, From().Changes.MaxCommandBytes);
    }

    [Fact]
    public void EveryOptionHelpShowsIsASettingAndItsExampleIsAValidValue()
    {
        var options = CommandLineOption.All.Where(option => option.Key.StartsWith("Limits:", StringComparison.Ordinal)).ToList();
        Assert.Equal(13, options.Count);
        foreach (var option in options)
        {
            // The examples are below the default ceiling, so each parses alone.
            From((option.Key, option.Example));
        }
    }
}
