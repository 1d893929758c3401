namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary>The tests' parser refuses what Prometheus refuses: a parser that accepts anything would prove nothing.</summary>
public sealed class PrometheusTextParserTests
{
    [Theory]
    [InlineData("a_total 1\n")]
    [InlineData("# TYPE a counter\na{x=\"1} 1\n")]
    [InlineData("# TYPE a counter\na{x=\"\\q\"} 1\n")]
    [InlineData("# TYPE a counter\na{x=\"1\",x=\"2\"} 1\n")]
    [InlineData("# TYPE a counter\na one\n")]
    [InlineData("# TYPE 1a counter\n1a 1\n")]
    [InlineData("# TYPE a counter\n# TYPE b gauge\nb 1\na 2\n")]
    [InlineData("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n")]
    [InlineData("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")]
    [InlineData("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n")]
    [InlineData("# TYPE a counter\na -1\n")]
    [InlineData("# TYPE a counter\na 1")]
    public void RefusesWhatTheFormatForbids(string text) =>
        Assert.Throws<FormatException>(() => PrometheusTextParser.Parse(text));

    [Fact]
    public void ReadsEscapesHistogramsAndComments()
    {
        var families = PrometheusTextParser.Parse(
            "# HELP a A \\\\ help\\n\n# TYPE a counter\na{x=\"q\\\"\\\\\\n\"} 3\n# a comment\n" +
            "# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1.5\nh_count 2\n");
        Assert.Equal("A \\ help\n", families["a"].Help);
        Assert.Equal("q\"\\\n", families["a"].Samples.Single().Labels["x"]);
        Assert.Equal(4, families["h"].Samples.Count);
    }
}
