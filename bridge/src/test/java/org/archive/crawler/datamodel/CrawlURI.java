package org.archive.crawler.datamodel;

import java.io.IOException;
import java.io.ObjectOutputStream;

/**
 * Test-only stand-in for Heritrix 1.14's {@code org.archive.crawler.datamodel.CrawlURI}: its
 * name, serialVersionUID and serializable fields, and its {@code writeObject} (the out-links,
 * or null when there are none), so that a class catalog and pending values written with it
 * are what Heritrix 1.14's {@code BdbMultipleWorkQueues} stores. The tests also compile it
 * without its {@code writeObject}, the shape of earlier Heritrix 1 releases
 * (tests/heritrix_stores.py, {@code early_crawl_uri}).
 */
public class CrawlURI extends CandidateURI {
    private static final long serialVersionUID = 7874096757350100472L;

    private int fetchStatus = 0;
    private int deferrals = 0;
    private int fetchAttempts = 0;
    private int linkHopCount = -1;
    private int embedHopCount = -1;
    private String userAgent = null;
    private long contentSize = -1;
    private long contentLength = -1;
    private String contentType = null;
    private boolean prerequisite = false;
    private boolean post = false;
    protected long ordinal;
    private String cachedCrawlURIString = null;
    private byte[] contentDigest = null;
    private String contentDigestScheme = null;
    int holderCost = -1;
    private transient java.util.Collection<Object> outLinks = new java.util.ArrayList<Object>();

    public CrawlURI(String uri, String via, String pathFromSeed, String classKey, int schedulingDirective,
                    boolean isSeed, CharSequence viaContext, long ordinal, int holderCost, int fetchAttempts) {
        super(uri, via, pathFromSeed, classKey, schedulingDirective, isSeed, viaContext);
        this.ordinal = ordinal;
        this.holderCost = holderCost;
        this.fetchAttempts = fetchAttempts;
    }

    public long getOrdinal() {
        return ordinal;
    }

    public int getHolderCost() {
        return holderCost;
    }

    private void writeObject(ObjectOutputStream stream) throws IOException {
        stream.defaultWriteObject();
        stream.writeObject(outLinks.isEmpty() ? null : outLinks);
    }
}
