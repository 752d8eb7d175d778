package org.pycrawler.bridge;

import java.sql.Timestamp;
import java.util.Date;

/**
 * One URL of a crawl frontier with what the crawler learns about it: the record of the
 * seed book's TODO queue (seeds/001), field for field and in the book's order.
 *
 * <p>Stored with {@link CrawlUrlBinding} (a versioned tuple format, readable from Python),
 * not Java serialization; the book's own serializable class lives in the default package
 * and is read by pycrawler's serial decoder instead.
 */
public class CrawlUrl {
    /** The URL as found, host as a name (the book's key). */
    private String oriUrl;
    /** The URL with the host resolved to an IP, to spot one host under two names. */
    private String url;
    /** A number the crawler assigns. */
    private int urlNo;
    /** The fetch's result code. */
    private int statusCode;
    /** How many documents link here. */
    private int hitNum;
    /** The document's character set. */
    private String charSet;
    /** The document's abstract. */
    private String abstractText;
    /** The document's author. */
    private String author;
    /** The document's weight (guide-word information included). */
    private int weight;
    /** The document's description. */
    private String description;
    /** The document's size. */
    private int fileSize;
    /** Last modification time. */
    private Timestamp lastUpdateTime;
    /** Expiry time. */
    private Date timeToLive;
    /** The document's title. */
    private String title;
    /** The document's type. */
    private String type;
    /** Links found in the document (the book's spelling). */
    private String[] urlRefrences;
    /** Crawl depth: seeds are layer 0, their links layer 1, .... */
    private int layer;

    public CrawlUrl() {}

    public String getOriUrl() {
        return oriUrl;
    }

    public void setOriUrl(String oriUrl) {
        this.oriUrl = oriUrl;
    }

    public String getUrl() {
        return url;
    }

    public void setUrl(String url) {
        this.url = url;
    }

    public int getUrlNo() {
        return urlNo;
    }

    public void setUrlNo(int urlNo) {
        this.urlNo = urlNo;
    }

    public int getStatusCode() {
        return statusCode;
    }

    public void setStatusCode(int statusCode) {
        this.statusCode = statusCode;
    }

    public int getHitNum() {
        return hitNum;
    }

    public void setHitNum(int hitNum) {
        this.hitNum = hitNum;
    }

    public String getCharSet() {
        return charSet;
    }

    public void setCharSet(String charSet) {
        this.charSet = charSet;
    }

    public String getAbstractText() {
        return abstractText;
    }

    public void setAbstractText(String abstractText) {
        this.abstractText = abstractText;
    }

    public String getAuthor() {
        return author;
    }

    public void setAuthor(String author) {
        this.author = author;
    }

    public int getWeight() {
        return weight;
    }

    public void setWeight(int weight) {
        this.weight = weight;
    }

    public String getDescription() {
        return description;
    }

    public void setDescription(String description) {
        this.description = description;
    }

    public int getFileSize() {
        return fileSize;
    }

    public void setFileSize(int fileSize) {
        this.fileSize = fileSize;
    }

    public Timestamp getLastUpdateTime() {
        return lastUpdateTime;
    }

    public void setLastUpdateTime(Timestamp lastUpdateTime) {
        this.lastUpdateTime = lastUpdateTime;
    }

    public Date getTimeToLive() {
        return timeToLive;
    }

    public void setTimeToLive(Date timeToLive) {
        this.timeToLive = timeToLive;
    }

    public String getTitle() {
        return title;
    }

    public void setTitle(String title) {
        this.title = title;
    }

    public String getType() {
        return type;
    }

    public void setType(String type) {
        this.type = type;
    }

    public String[] getUrlRefrences() {
        return urlRefrences;
    }

    public void setUrlRefrences(String[] urlRefrences) {
        this.urlRefrences = urlRefrences;
    }

    public int getLayer() {
        return layer;
    }

    public void setLayer(int layer) {
        this.layer = layer;
    }
}
